/**
 * Realistic credentials of every shape `sanitize` masks, for property tests: the shape of each secret part (to feed a
 * generator such as fast-check's `stringMatching`) and the ways the credential shows up in a driver's or a
 * provider's error text. Built from the vendors' documented formats, not from the masking table, so a test that uses
 * them checks the table rather than restating it.
 */

/** One kind of credential. */
export interface CredentialForm {
  /** Stable name, e.g. `aws-key-pair`. */
  readonly id: string;
  /** The shape of each secret part, anchored (`^…$`). Every part must be masked wherever it appears. */
  readonly parts: readonly RegExp[];
  /** The texts the parts appear in (a header, a config line, a JSON body, a URL), one per way. */
  readonly contexts: readonly ((parts: readonly string[]) => string)[];
}

const p = (parts: readonly string[], i = 0): string => parts[i] ?? '';

const pem = (label: string) => (parts: readonly string[]) =>
  `-----BEGIN ${label}-----\n${p(parts)}\n-----END ${label}-----`;

/** The credential forms of issue 22: every one must be masked in every output. */
export const CREDENTIAL_FORMS: readonly CredentialForm[] = [
  {
    id: 'openai-key',
    parts: [/^sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{40,120}$/],
    contexts: [
      (x) => `Incorrect API key provided: ${p(x)}. You can find your API key at the dashboard.`,
      (x) => `OPENAI_API_KEY=${p(x)}`,
      (x) => `{"apiKey":"${p(x)}","baseURL":"https://api.openai.com/v1"}`,
    ],
  },
  {
    id: 'anthropic-key',
    parts: [/^sk-ant-api0[34]-[A-Za-z0-9_-]{93}AA$/],
    contexts: [(x) => `invalid x-api-key ${p(x)}`, (x) => `ANTHROPIC_API_KEY="${p(x)}"`],
  },
  {
    id: 'aws-key-pair',
    parts: [/^(?:AKIA|ASIA)[A-Z2-7]{16}$/, /^[A-Za-z0-9/+]{40}$/],
    contexts: [
      (x) => `[default]\naws_access_key_id = ${p(x)}\naws_secret_access_key = ${p(x, 1)}`,
      (x) => `AWS_ACCESS_KEY_ID=${p(x)} AWS_SECRET_ACCESS_KEY=${p(x, 1)}`,
      (x) => `{"AccessKeyId":"${p(x)}","SecretAccessKey":"${p(x, 1)}"}`,
      (x) => `credentials ${p(x)}:${p(x, 1)} were rejected`,
      (x) => `signing with ${p(x)} ${p(x, 1)}`,
    ],
  },
  {
    id: 'github-token',
    parts: [/^gh[pousr]_[A-Za-z0-9]{36}$/],
    contexts: [
      (x) => `Bad credentials for token ${p(x)}`,
      (x) => `https://x-access-token:${p(x)}@github.com/acme/app.git`,
      (x) => `GITHUB_TOKEN=${p(x)}`,
    ],
  },
  {
    id: 'github-fine-grained-pat',
    parts: [/^github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}$/],
    contexts: [(x) => `token ${p(x)} has expired`, (x) => `Authorization: token ${p(x)}`],
  },
  {
    id: 'gitlab-token',
    parts: [/^glpat-[A-Za-z0-9_-]{20}$/],
    contexts: [(x) => `401 Unauthorized (PRIVATE-TOKEN ${p(x)})`, (x) => `gitlab_token: ${p(x)}`],
  },
  {
    id: 'slack-token',
    parts: [
      /^(?:xoxb-[0-9]{10,13}-[0-9]{10,13}-[A-Za-z0-9]{24}|xoxp-[0-9]{10,13}-[0-9]{10,13}-[0-9]{10,13}-[a-f0-9]{32}|xapp-1-[A-Z0-9]{11}-[0-9]{13}-[a-f0-9]{64})$/,
    ],
    contexts: [(x) => `slack: invalid_auth (${p(x)})`, (x) => `{"token":"${p(x)}","channel":"C024BE91L"}`],
  },
  {
    id: 'google-api-key',
    parts: [/^AIza[A-Za-z0-9_-]{35}$/],
    contexts: [
      (x) => `GET https://generativelanguage.googleapis.com/v1/models?key=${p(x)} returned 400`,
      (x) => `API key not valid: ${p(x)}`,
    ],
  },
  {
    id: 'stripe-key',
    parts: [/^(?:sk|rk|pk)_live_[A-Za-z0-9]{24,99}$/],
    contexts: [(x) => `Invalid API Key provided: ${p(x)}`, (x) => `stripe.apiKey = '${p(x)}'`],
  },
  {
    id: 'jwt',
    parts: [/^eyJ[A-Za-z0-9_-]{16,48}\.eyJ[A-Za-z0-9_-]{20,160}\.[A-Za-z0-9_-]{43,86}$/],
    contexts: [
      (x) => `jwt expired: ${p(x)}`,
      (x) => `Cookie: session=${p(x)}; Path=/`,
      (x) => `{"id_token":"${p(x)}"}`,
    ],
  },
  {
    id: 'pem-private-key',
    parts: [/^(?:[A-Za-z0-9+/]{64}\n){2,5}[A-Za-z0-9+/]{8,63}={0,2}$/],
    contexts: [
      pem('RSA PRIVATE KEY'),
      pem('PRIVATE KEY'),
      pem('EC PRIVATE KEY'),
      pem('OPENSSH PRIVATE KEY'),
      pem('ENCRYPTED PRIVATE KEY'),
      // A service-account JSON file, newlines escaped.
      (x) =>
        `{"type":"service_account","private_key":"-----BEGIN PRIVATE KEY-----\\n${p(x).replaceAll('\n', '\\n')}\\n-----END PRIVATE KEY-----\\n"}`,
    ],
  },
  {
    id: 'bearer-token',
    parts: [/^[A-Za-z0-9._~+/-]{20,80}$/],
    contexts: [
      (x) => `Authorization: Bearer ${p(x)}`,
      (x) => `request failed with bearer ${p(x)}`,
      (x) => `{"headers":{"authorization":"Bearer ${p(x)}"}}`,
    ],
  },
  {
    id: 'basic-auth',
    parts: [/^[A-Za-z0-9+/]{16,60}={0,2}$/],
    contexts: [
      (x) => `Authorization: Basic ${p(x)}`,
      (x) => `curl -H 'authorization: Basic ${p(x)}' https://example.com`,
      (x) => `{"Authorization":"Basic ${p(x)}"}`,
    ],
  },
  {
    id: 'url-password',
    parts: [/^[A-Za-z0-9._~%!$+,;=-]{8,32}$/],
    contexts: [
      (x) => `connect ECONNREFUSED postgres://app:${p(x)}@db.internal:5432/memory`,
      (x) => `redis://:${p(x)}@127.0.0.1:6379/0`,
      (x) => `mongodb+srv://admin:${p(x)}@cluster0.example.net/?retryWrites=true`,
      (x) => `fetch https://deploy:${p(x)}@registry.example.com/v2/ failed`,
    ],
  },
];

/**
 * The first piece of a secret part found in `output`, or null: every run of `window` characters of each part (each
 * line of a multi-line part) is looked for, so a half-masked secret is caught too.
 */
export function leakedSecret(output: string, parts: readonly string[], window = 12): string | null {
  for (const part of parts) {
    for (const line of part.split('\n')) {
      const size = Math.min(window, line.length);
      if (size < 6) continue;
      for (let i = 0; i + size <= line.length; i++) {
        const piece = line.slice(i, i + size);
        if (output.includes(piece)) return piece;
      }
    }
  }
  return null;
}
