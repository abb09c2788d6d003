// Cold-start bench child: the yardstick, importing the Agents SDK alone.
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
await import('@openai/agents');
process.stdout.write(`ready ${JSON.stringify({ cpuMs: cpuMs() })}\n`);
