import type {
  ChangeKind,
  Changelog,
  ComparedVersion,
  ConceptChange,
  MappingChange,
} from './version-compare.service';
import { CHANGE_KINDS } from './version-compare.service';

/*
 * The release note of a `$changelog` in Markdown (REST `output=markdown`, GraphQL
 * `SourceChangelog.markdown`): one text for every edge.
 */

/** Markdown text: what would be read as markup, escaped. */
function md(text: string | null | undefined): string {
  return (text ?? '').replace(/([\\`*_[\]{}<>|#])/g, '\\$1').replace(/\s+/g, ' ');
}

const HEADINGS: Record<ChangeKind, string> = {
  new: 'New',
  removed: 'Removed',
  retired: 'Retired',
  major: 'Changed in meaning',
  minor: 'Changed otherwise',
};

function mappingLine(m: MappingChange): string {
  const target = `${md(m.toConcept)}${m.toSource ? ` (${md(m.toSource)})` : ''}`;
  const was =
    m.before && (m.before.toConcept !== m.toConcept || m.before.mapType !== m.mapType)
      ? ` — was ${md(m.before.mapType)} → ${md(m.before.toConcept)}`
      : '';
  return `${HEADINGS[m.kind].toLowerCase()}: \`${md(m.code)}\` ${md(m.mapType)} → ${target}${was}`;
}

function conceptLine(c: ConceptChange): string[] {
  const lines = [`- **${md(c.code)}** ${md(c.displayName)}`];
  const b = c.before;
  if (b) {
    if (b.displayName !== c.displayName)
      lines.push(`  - name: ${md(b.displayName)} → ${md(c.displayName)}`);
    if (b.conceptClass !== c.conceptClass)
      lines.push(`  - class: ${md(b.conceptClass)} → ${md(c.conceptClass)}`);
    if (b.datatype !== c.datatype)
      lines.push(`  - datatype: ${md(b.datatype)} → ${md(c.datatype)}`);
    const before = new Set(b.names.map((n) => `${n.locale}:${n.name}`));
    const after = new Set(c.names.map((n) => `${n.locale}:${n.name}`));
    for (const n of c.names)
      if (!before.has(`${n.locale}:${n.name}`))
        lines.push(`  - name added (${md(n.locale)}): ${md(n.name)}`);
    for (const n of b.names)
      if (!after.has(`${n.locale}:${n.name}`))
        lines.push(`  - name removed (${md(n.locale)}): ${md(n.name)}`);
  }
  for (const m of c.mappings) lines.push(`  - mapping ${mappingLine(m)}`);
  return lines;
}

/** A release note of the changelog: a summary table, then each change in words. */
export function changelogMarkdown(log: Changelog): string {
  const { older, newer, concepts, mappings } = log.comparison;
  const name = (v: ComparedVersion) => md(v.view.version.mnemonic);
  const out = [
    `# Changelog of ${md(newer.view.repo.mnemonic)}: ${name(older)} → ${name(newer)}`,
    '',
    `| | Concepts | Mappings |`,
    `|---|---:|---:|`,
    `| Active in ${name(older)} | ${older.concepts} | ${older.mappings} |`,
    `| Active in ${name(newer)} | ${newer.concepts} | ${newer.mappings} |`,
    ...CHANGE_KINDS.map(
      (k) => `| ${HEADINGS[k]} | ${concepts[k].length} | ${mappings[k].length} |`,
    ),
    `| Unchanged | ${concepts.same} | ${mappings.same} |`,
  ];
  for (const kind of CHANGE_KINDS) {
    const shown = log.concepts.filter((c) => c.kind === kind);
    if (shown.length === 0) continue;
    out.push(
      '',
      `## ${HEADINGS[kind]} concepts (${shown.length})`,
      '',
      ...shown.flatMap(conceptLine),
    );
  }
  const mappingsOnly = log.concepts.filter((c) => c.kind === null);
  if (mappingsOnly.length > 0) {
    out.push('', `## Concepts whose mappings changed (${mappingsOnly.length})`, '');
    out.push(...mappingsOnly.flatMap(conceptLine));
  }
  if (log.mappings.length > 0) {
    out.push('', `## Other mappings (${log.mappings.length})`, '');
    out.push(...log.mappings.map((m) => `- ${mappingLine(m)}`));
  }
  return `${out.join('\n')}\n`;
}
