/**
 * Status marks drawn as SVG shapes. They used to be characters (⏸, ⏱, ▶…), and Debian's default fonts have no glyph for
 * some of them, which then rendered as empty boxes; shapes look the same in every browser and font. Each mark sits
 * beside the status's name, so it is decoration (aria-hidden) and status is never told by the mark or colour alone.
 */

/** The shapes of one status's mark in a 16×16 box, stroked and filled with the current text colour. */
function shapes(status: string) {
  switch (status) {
    case 'queued':
    case 'pending':
      return <circle cx="8" cy="8" r="5.5" fill="none" />;
    case 'running':
      return <path d="M4 2.5 L13.5 8 L4 13.5 Z" fill="currentColor" />;
    case 'waiting':
      return (
        <>
          <rect x="3.5" y="2.5" width="3" height="11" rx="0.5" fill="currentColor" stroke="none" />
          <rect x="9.5" y="2.5" width="3" height="11" rx="0.5" fill="currentColor" stroke="none" />
        </>
      );
    case 'completed':
      return <path d="M2.5 8.5 L6.5 12.5 L13.5 3.5" fill="none" />;
    case 'failed':
      return <path d="M3.5 3.5 L12.5 12.5 M12.5 3.5 L3.5 12.5" fill="none" />;
    case 'skipped':
      return <path d="M3 8 L13 8" fill="none" />;
    case 'cancelled':
      return (
        <>
          <circle cx="8" cy="8" r="5.5" fill="none" />
          <path d="M4.2 11.8 L11.8 4.2" fill="none" />
        </>
      );
    case 'timed_out':
      return (
        <>
          <circle cx="8" cy="9" r="5.5" fill="none" />
          <path d="M8 9 L8 5.8 M8 9 L10.4 10.4 M6 1.8 L10 1.8" fill="none" />
        </>
      );
    default:
      return <circle cx="8" cy="8" r="3" fill="currentColor" stroke="none" />;
  }
}

/**
 * The mark of `status`. In HTML it is sized in `em` to sit in a line of text; inside the graph's SVG, `x`, `y` and
 * `size` place it in user units.
 */
export function StatusMark({
  status,
  className,
  x,
  y,
  size,
  testId,
}: {
  status: string;
  className: string;
  x?: number;
  y?: number;
  size?: number | string;
  testId?: string;
}) {
  return (
    <svg
      className={className}
      x={x}
      y={y}
      width={size ?? '0.9em'}
      height={size ?? '0.9em'}
      viewBox="0 0 16 16"
      aria-hidden="true"
      focusable="false"
      stroke="currentColor"
      strokeWidth="2"
      strokeLinecap="round"
      strokeLinejoin="round"
      data-testid={testId}
    >
      {shapes(status)}
    </svg>
  );
}
