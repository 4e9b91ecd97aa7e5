/**
 * What the last start of each workflow in this process read: the workflow, its templates and its sub-workflows. The
 * next start builds its snapshot from them at once, and reads them again while its run is being recorded (the very
 * reads a start without them makes first, ./start-run.ts); the run stands only if those reads find the same
 * documents. So an edit made through another API process is never missed — a start that meets one removes its record
 * and begins again from what is there now — and a start of an unchanged workflow waits for one round trip less.
 * Bounded by entries and by the bytes of the documents held; one per app, passed in.
 */
import { isDeepStrictEqual } from 'node:util';
import type { WorkflowDoc } from '../../db/workflows';
import type { SnapshotSources } from '../../runtime/runs/snapshot';

const MAX_ENTRIES = 2_000;
/** A snapshot is at most 200 KiB; most are a few. */
const MAX_BYTES = 32 * 1024 * 1024;

/** A workflow as a start read it, with everything its runs' snapshots are built from. */
export interface StartSources {
  workflow: WorkflowDoc;
  sources: SnapshotSources;
  /** The templates its steps (and its sub-workflows' steps) name. */
  templateIds: string[];
}

interface Entry {
  ownerId: string;
  read: StartSources;
  bytes: number;
}

export class RecentSources {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  /** What the last start of `workflowId` by `ownerId` read in this process, if it did. */
  get(ownerId: string, workflowId: string): StartSources | undefined {
    const entry = this.entries.get(workflowId);
    return entry?.ownerId === ownerId ? entry.read : undefined;
  }

  /** The templates to read along with workflow `workflowId` (those its last start used), when known. */
  templateIdsOf(workflowId: string): string[] | undefined {
    return this.entries.get(workflowId)?.read.templateIds;
  }

  remember(ownerId: string, read: StartSources): void {
    this.forget(read.workflow._id);
    const bytes = sizeOf(read);
    if (bytes > MAX_BYTES / 16) return;
    while (this.entries.size >= MAX_ENTRIES || this.bytes + bytes > MAX_BYTES) {
      this.forget(this.entries.keys().next().value!);
    }
    this.entries.set(read.workflow._id, { ownerId, read, bytes });
    this.bytes += bytes;
  }

  forget(workflowId: string): void {
    const entry = this.entries.get(workflowId);
    if (!entry) return;
    this.entries.delete(workflowId);
    this.bytes -= entry.bytes;
  }
}

/** The same documents, as read twice (dates and maps compared by value). */
export function sameSources(a: StartSources, b: StartSources): boolean {
  return (
    isDeepStrictEqual(a.workflow, b.workflow) &&
    isDeepStrictEqual(a.sources.templates, b.sources.templates) &&
    isDeepStrictEqual(a.sources.workflows, b.sources.workflows)
  );
}

function sizeOf(read: StartSources): number {
  const docs = [read.workflow, ...read.sources.templates.values(), ...read.sources.workflows.values()];
  return docs.reduce((sum, doc) => sum + Buffer.byteLength(JSON.stringify(doc), 'utf8'), 0);
}
