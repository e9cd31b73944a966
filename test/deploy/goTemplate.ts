// Just enough of Go's text/template syntax to check a Helm chart without helm: the actions of a
// template, whether their blocks balance, the named templates and .Values paths they use, and the
// template's YAML with every action masked.

/** An action `{{ ... }}` of a template, without its delimiters and trim markers. */
export interface TemplateAction {
  readonly text: string;
  readonly line: number;
}

const ACTION = /\{\{-?\s*([\s\S]*?)\s*-?\}\}/g;

/** The actions of a template, comments excluded. */
export function templateActions(template: string): TemplateAction[] {
  const actions: TemplateAction[] = [];
  for (const match of template.matchAll(ACTION)) {
    const text = match[1] ?? '';
    if (text.startsWith('/*')) continue;
    actions.push({ text, line: template.slice(0, match.index).split('\n').length });
  }
  return actions;
}

/** Problems with block structure: every if/with/range/define closed by one end, in order. */
export function blockProblems(template: string): string[] {
  const open: TemplateAction[] = [];
  const problems: string[] = [];
  for (const action of templateActions(template)) {
    const keyword = /^(\w+)/.exec(action.text)?.[1];
    if (keyword === 'if' || keyword === 'with' || keyword === 'range' || keyword === 'define') {
      open.push(action);
    } else if (keyword === 'end') {
      if (open.pop() === undefined) problems.push(`line ${action.line}: end without a block`);
    }
  }
  for (const action of open) problems.push(`line ${action.line}: "${action.text}" is never ended`);
  return problems;
}

/** Named templates a template defines. */
export function definedTemplates(template: string): string[] {
  return templateActions(template).flatMap((action) => {
    const name = /^define\s+"([^"]+)"/.exec(action.text)?.[1];
    return name === undefined ? [] : [name];
  });
}

/** Named templates a template uses with include or template. */
export function usedTemplates(template: string): string[] {
  return templateActions(template).flatMap((action) =>
    [...action.text.matchAll(/\b(?:include|template)\s+"([^"]+)"/g)].map((match) => match[1] ?? ''),
  );
}

/** Every `.Values.a.b` path the template reads, as ['a', 'b']. */
export function valuesPaths(template: string): string[][] {
  return templateActions(template).flatMap((action) =>
    [...action.text.matchAll(/\$?\.Values((?:\.\w+)+)/g)].map((match) =>
      (match[1] ?? '').slice(1).split('.'),
    ),
  );
}

/** The body of one `define` block. */
export function defineBody(template: string, name: string): string {
  const start = new RegExp(
    `\\{\\{-?\\s*define\\s+"${name.replace(/\./g, '\\.')}"\\s*-?\\}\\}`,
  ).exec(template);
  if (!start) throw new Error(`no define "${name}"`);
  let depth = 1;
  const rest = template.slice(start.index + start[0].length);
  for (const match of rest.matchAll(ACTION)) {
    const keyword = /^(\w+)/.exec(match[1] ?? '')?.[1];
    if (keyword === 'if' || keyword === 'with' || keyword === 'range' || keyword === 'define') {
      depth += 1;
    } else if (keyword === 'end') {
      depth -= 1;
      if (depth === 0) return rest.slice(0, match.index);
    }
  }
  throw new Error(`define "${name}" is never ended`);
}

/**
 * The template as plain YAML: lines holding only actions (control flow, includes that indent
 * themselves) are dropped, and an action inside a line becomes the scalar TEMPLATE.
 */
export function maskActions(template: string): string {
  return template
    .replace(/\{\{-?\s*\/\*[\s\S]*?\*\/\s*-?\}\}/g, '')
    .split('\n')
    .filter((line) => !/^\s*(\{\{[\s\S]*?\}\}\s*)+$/.test(line))
    .map((line) => line.replace(ACTION, 'TEMPLATE'))
    .join('\n');
}
