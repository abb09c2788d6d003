/** Serialises an artifact exactly as checked in: 2-space indent, final newline. */
export function artifactText(artifact: unknown): string {
  return `${JSON.stringify(artifact, null, 2)}\n`;
}
