/**
 * Which templates a workflow's steps used at its last start in this process, so the next start can read them in the
 * same round trip as the workflow itself (both reads go out together). Only a hint: the templates read are used only
 * when the workflow, as read now, names no other template; otherwise they are read again. Nothing stale can reach a
 * snapshot — both reads happen now, as they would one after the other. Bounded; one per app, passed in.
 */
const MAX_ENTRIES = 2_000;

export class TemplateHints {
  private readonly ids = new Map<string, string[]>();

  /** The template ids to read along with workflow `workflowId`, or undefined when this process has not started it. */
  get(workflowId: string): string[] | undefined {
    return this.ids.get(workflowId);
  }

  remember(workflowId: string, templateIds: string[]): void {
    if (!this.ids.has(workflowId) && this.ids.size >= MAX_ENTRIES) this.ids.delete(this.ids.keys().next().value!);
    this.ids.set(workflowId, templateIds);
  }
}
