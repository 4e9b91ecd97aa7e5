/**
 * The step graph of a workflow or run, laid out by dagre and drawn as SVG. One node per step: map and loop steps stay
 * one node with their item/iteration counts; a step's edges come from `depends_on` (absent: the step before it).
 * Status shows as colour, symbol and text; skipped steps are greyed and dashed. Nodes are buttons (Tab, Enter).
 */
import { useLayoutEffect, useMemo, useRef, useState, type KeyboardEvent, type RefObject } from 'react';
import dagre, { type EdgeLabel, type GraphLabel, type NodeLabel } from '@dagrejs/dagre';
import { statusText } from './format';
import { StatusMark } from './status-mark';
import type { ExecutionCounts, WorkflowStep } from './api';

export interface GraphNode {
  id: string;
  /** Second line: template name or kind. */
  subtitle: string;
  dependsOn: string[];
  status?: string;
  when?: string | null;
  repeat?: 'map' | 'loop' | null;
  counts?: ExecutionCounts | null;
}

/** The dependencies of each step as the engine reads them: `depends_on`, else the previous step. */
export function dependencies(steps: readonly Pick<WorkflowStep, 'id' | 'depends_on'>[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  steps.forEach((s, i) => {
    const prev = steps[i - 1];
    out.set(s.id, s.depends_on ?? (prev ? [prev.id] : []));
  });
  return out;
}

const W = 200;
const H = 66;
const H_COUNTS = 84;

interface Laid {
  nodes: { node: GraphNode; x: number; y: number; h: number }[];
  edges: { from: string; to: string; points: { x: number; y: number }[]; skipped: boolean }[];
  width: number;
  height: number;
}

function layout(nodes: readonly GraphNode[], rankdir: 'LR' | 'TB'): Laid {
  const g = new dagre.graphlib.Graph<GraphLabel, NodeLabel, EdgeLabel>();
  g.setGraph({ rankdir, nodesep: 22, ranksep: rankdir === 'LR' ? 56 : 34, marginx: 12, marginy: 12 });
  g.setDefaultEdgeLabel(() => ({}));
  const known = new Set(nodes.map((n) => n.id));
  for (const n of nodes) g.setNode(n.id, { width: W, height: n.counts ? H_COUNTS : H });
  for (const n of nodes) for (const d of n.dependsOn) if (known.has(d)) g.setEdge(d, n.id);
  dagre.layout(g);
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const graph = g.graph();
  return {
    nodes: nodes.map((node) => {
      const laid = g.node(node.id);
      return { node, x: laid.x ?? 0, y: laid.y ?? 0, h: laid.height };
    }),
    edges: g.edges().map((e) => ({
      from: e.v,
      to: e.w,
      points: (g.edge(e).points ?? []).slice(),
      skipped: byId.get(e.w)?.status === 'skipped',
    })),
    width: graph.width ?? W,
    height: graph.height ?? H,
  };
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function countsLine(c: ExecutionCounts, repeat: 'map' | 'loop' | null | undefined): string {
  const parts = [`${c.completed}/${c.total} done`];
  if (c.running) parts.push(`${c.running} running`);
  if (c.waiting) parts.push(`${c.waiting} waiting`);
  if (c.failed) parts.push(`${c.failed} failed`);
  return `${repeat === 'loop' ? 'iterations' : 'items'}: ${parts.join(', ')}`;
}

/** The content width of `ref`'s element, followed as it resizes (null before the first measurement). */
function useContentWidth(ref: RefObject<HTMLElement | null>): number | null {
  const [width, setWidth] = useState<number | null>(null);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    setWidth(el.clientWidth);
    const observer = new ResizeObserver(() => setWidth(el.clientWidth));
    observer.observe(el);
    return () => observer.disconnect();
  }, [ref]);
  return width;
}

/**
 * Left to right when that fits the width at hand; otherwise top to bottom when that fits (a long chain becomes a
 * column, scrolled vertically if it must); otherwise the narrower of the two, scrolled inside its frame. Scaling down
 * instead would make the 12.5 px labels unreadable long before a long chain fits.
 */
function fitLayout(nodes: readonly GraphNode[], width: number | null): Laid {
  const across = layout(nodes, 'LR');
  if (width === null || across.width <= width) return across;
  const down = layout(nodes, 'TB');
  return down.width < across.width ? down : across;
}

export function StepGraph({
  nodes,
  selected,
  onSelect,
  label,
}: {
  nodes: readonly GraphNode[];
  selected?: string | null;
  onSelect?: (id: string) => void;
  label: string;
}) {
  const frame = useRef<HTMLDivElement>(null);
  const width = useContentWidth(frame);
  const laid = useMemo(() => fitLayout(nodes, width), [nodes, width]);
  const key = (id: string) => (e: KeyboardEvent) => {
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      onSelect?.(id);
    }
  };
  return (
    <div className="graph-scroll" ref={frame}>
      <svg
        className="graph"
        role="group"
        aria-label={label}
        data-testid="step-graph"
        width={laid.width}
        height={laid.height}
        viewBox={`0 0 ${laid.width} ${laid.height}`}
      >
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto">
            <path d="M0,0 L10,5 L0,10 z" className="arrowhead" />
          </marker>
        </defs>
        {laid.edges.map((e) => (
          <polyline
            key={`${e.from}->${e.to}`}
            className={`edge${e.skipped ? ' edge-skipped' : ''}`}
            points={e.points.map((p) => `${p.x},${p.y}`).join(' ')}
            markerEnd="url(#arrow)"
            data-testid="graph-edge"
            data-from={e.from}
            data-to={e.to}
          />
        ))}
        {laid.nodes.map(({ node, x, y, h }) => {
          const status = node.status ?? 'definition';
          const left = x - W / 2;
          const top = y - h / 2;
          const kind = node.repeat ? ` · ${node.repeat}` : '';
          return (
            <g
              key={node.id}
              className={`node status-${status}${selected === node.id ? ' selected' : ''}`}
              transform={`translate(${left},${top})`}
              role={onSelect ? 'button' : 'img'}
              tabIndex={onSelect ? 0 : undefined}
              aria-pressed={onSelect ? selected === node.id : undefined}
              aria-label={`Step ${node.id}${node.status ? `: ${statusText(node.status)}` : ''}${
                node.when ? `, when ${node.when}` : ''
              }${node.counts ? `, ${countsLine(node.counts, node.repeat)}` : ''}`}
              data-testid="step-node"
              data-step-id={node.id}
              data-status={node.status ?? ''}
              onClick={onSelect ? () => onSelect(node.id) : undefined}
              onKeyDown={onSelect ? key(node.id) : undefined}
            >
              <title>{node.when ? `${node.id} — when ${node.when}` : node.id}</title>
              <rect width={W} height={h} rx={8} className="node-box" />
              <text x={12} y={21} className="node-title">
                {/* The kind shortens the id, not the box's edge: the full id is in the title. */}
                {clip(node.id, 22 - kind.length)}
                <tspan className="node-kind">{kind}</tspan>
              </text>
              <text x={12} y={38} className="node-sub">
                {clip(node.when ? `if ${node.when}` : node.subtitle, 30)}
              </text>
              {node.status && (
                <>
                  <StatusMark status={node.status} className="node-mark" x={12} y={46} size={11} testId="status-mark" />
                  <text x={28} y={56} className="node-status">
                    {statusText(node.status)}
                  </text>
                </>
              )}
              {node.counts && (
                <text x={12} y={74} className="node-counts">
                  {clip(countsLine(node.counts, node.repeat), 32)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
    </div>
  );
}
