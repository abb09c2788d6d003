/** A logger that drops every line (structurally the engine's `Logger`), for stores and runtimes opened by tests. */
export const quiet: { info(message: string): void; warn(message: string): void } = {
  info: () => {},
  warn: () => {},
};
