/**
 * Where an agent's side effects may go (its e-mail recipients and the hosts `http_fetch` may reach). A page the agent
 * reads can tell the model to mail or fetch anything, so the owner — not the model — decides the destinations.
 * Workflow-safe: types and pure constants only; matching lives in temporal/tools/egress.ts.
 */

/** What a template (or a workflow step, field by field) declares; an absent field means the default. */
export interface EgressSettings {
  /** Exact addresses (`ops@acme.com`) or whole domains (`@acme.com`). Absent or empty: no recipient at all. */
  email_recipients?: string[];
  /** `host`, `*.host` (subdomains only) or either with `:port`. Absent: any public host; empty: none. */
  http_hosts?: string[];
}

/** The policy an agent step runs with (in the run snapshot and the transcript's setup entry). */
export interface EgressPolicy {
  /** Deny by default: `[]` lets the agent e-mail nobody. */
  email_recipients: string[];
  /** null: any public host (the SSRF guard still applies); `[]`: no host. */
  http_hosts: string[] | null;
}

/** A step's settings replace the template's field by field (a step narrows or widens what it needs explicitly). */
export function resolveEgress(template: EgressSettings | undefined, step: EgressSettings | undefined): EgressPolicy {
  return {
    email_recipients: step?.email_recipients ?? template?.email_recipients ?? [],
    http_hosts: step?.http_hosts ?? template?.http_hosts ?? null,
  };
}

/** What a transcript written before egress policies existed runs with: the defaults. */
export const DEFAULT_EGRESS: EgressPolicy = { email_recipients: [], http_hosts: null };
