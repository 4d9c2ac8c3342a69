/**
 * The bench's goals as one SVG: a bar per measure for its ratio (to its baseline, or to its
 * absolute target) and a mark where the goal lies, green when met and red when not, so a
 * regression shows at a glance. Lower is better everywhere.
 */
import { goalsIn, targetBound } from "./goals.js";

const WIDTH = 760;
const LABEL_WIDTH = 250;
const VALUE_WIDTH = 130;
const ROW_HEIGHT = 26;
const TOP = 56;
/** Ratios past this are drawn to the edge with their value written out. */
const MAX_AXIS = 4;
const MET = "#2e7d32";
const MISSED = "#c62828";

function escape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** The SVG text for the goals in `results`; `caption` goes under the title (machine, date). */
export function goalsChart(results: unknown, caption: string): string {
  const goals = goalsIn(results);
  const axis = Math.min(MAX_AXIS, Math.max(1.5, ...goals.flatMap(({ goal }) => [goal.ratio, targetBound(goal.target)]).filter(Number.isFinite)) * 1.1);
  const barWidth = WIDTH - LABEL_WIDTH - VALUE_WIDTH;
  const x = (ratio: number) => LABEL_WIDTH + (Math.min(ratio, axis) / axis) * barWidth;
  const height = TOP + goals.length * ROW_HEIGHT + 30;
  const rows = goals.map(({ name, goal }, i) => {
    const y = TOP + i * ROW_HEIGHT;
    const bound = targetBound(goal.target);
    const colour = goal.met ? MET : MISSED;
    return [
      `<text x="${LABEL_WIDTH - 8}" y="${y + 17}" text-anchor="end">${escape(name)}</text>`,
      `<rect x="${LABEL_WIDTH}" y="${y + 5}" width="${(x(goal.ratio) - LABEL_WIDTH).toFixed(1)}" height="${ROW_HEIGHT - 10}" fill="${colour}" opacity="0.8"/>`,
      `<line x1="${x(bound).toFixed(1)}" x2="${x(bound).toFixed(1)}" y1="${y + 1}" y2="${y + ROW_HEIGHT - 1}" stroke="#000" stroke-width="2.5"/>`,
      `<text x="${WIDTH - VALUE_WIDTH + 8}" y="${y + 17}" fill="${colour}">${goal.ratio.toFixed(2)} (goal ${escape(goal.target)})</text>`,
    ].join("");
  });
  const one = x(1).toFixed(1);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="12" y="20" font-size="15" font-weight="bold">albedo bench: each measure over its baseline or target (lower is better)</text>`,
    `<text x="12" y="38" fill="#555">${escape(caption)}; black mark = goal, grey line = parity (1.0)</text>`,
    `<line x1="${one}" x2="${one}" y1="${TOP}" y2="${TOP + goals.length * ROW_HEIGHT}" stroke="#999" stroke-dasharray="3,3"/>`,
    ...rows,
    `<text x="${LABEL_WIDTH}" y="${height - 10}" fill="#555">0</text>`,
    `<text x="${LABEL_WIDTH + barWidth}" y="${height - 10}" fill="#555" text-anchor="end">${axis.toFixed(1)}</text>`,
    "</svg>",
    "",
  ].join("\n");
}
