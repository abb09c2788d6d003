// HTTP limits, apart from the HTTP stack, so that `--help` and the stdio server load none of it.

/** Default largest request body: 1 MiB (a `remember` text is at most a few KiB). */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
