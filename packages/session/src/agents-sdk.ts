/**
 * The OpenAI Agents SDK, loaded on first need. The package's root imports only its types, so it loads (and its
 * session, helpers and runtime work) without the SDK installed, and constrains no SDK version beyond what the few
 * runtime uses below need: `tool` for the memory tools and the tracing API for the recall span.
 */
import { AgentsSdkMissingError } from './errors.js';

type AgentsSdk = typeof import('@openai/agents');
type Zod = typeof import('zod');

let sdk: Promise<AgentsSdk | null> | undefined;

/** The SDK, or null when it cannot be loaded (for what works without it, such as tracing). */
export function optionalAgentsSdk(): Promise<AgentsSdk | null> {
  sdk ??= import('@openai/agents').catch(() => null);
  return sdk;
}

/** The SDK and zod for `what`, or {@link AgentsSdkMissingError} saying what to install. */
export async function requireAgentsSdk(what: string): Promise<{ sdk: AgentsSdk; z: Zod['z'] }> {
  const loaded = await optionalAgentsSdk();
  if (!loaded) throw new AgentsSdkMissingError(what);
  try {
    const { z } = await import('zod');
    return { sdk: loaded, z };
  } catch (cause) {
    throw new AgentsSdkMissingError(`${what} (with zod, a dependency of the SDK)`, { cause });
  }
}
