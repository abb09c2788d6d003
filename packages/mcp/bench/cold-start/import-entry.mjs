// Cold-start bench child: imports one entry point (argv[2]), as a program that starts with it would.
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const entry = process.argv[2];
if (entry === 'mem01session') {
  // What an agent program imports: the SDK it runs on, then mem01session.
  const before = performance.now();
  await import('@openai/agents');
  const between = performance.now();
  await import('mem01session');
  process.stdout.write(
    `ready ${JSON.stringify({ sdkMs: between - before, ownMs: performance.now() - between, cpuMs: cpuMs() })}\n`,
  );
} else {
  await import(entry);
  process.stdout.write(`ready ${JSON.stringify({ cpuMs: cpuMs() })}\n`);
}
