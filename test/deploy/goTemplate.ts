// Just enough of Go's text/template syntax to read a Helm chart's sources: the actions of a template,
// and the named templates and .Values paths they use, in every branch whether rendered or not.

/** An action `{{ ... }}` of a template, without its delimiters and trim markers. */
export interface TemplateAction {
  readonly text: string;
  readonly line: number;
}

const ACTION = /\{\{-?\s*([\s\S]*?)\s*-?\}\}/g;

/** The actions of a template, comments excluded. */
function templateActions(template: string): TemplateAction[] {
  const actions: TemplateAction[] = [];
  for (const match of template.matchAll(ACTION)) {
    const text = match[1] ?? '';
    if (text.startsWith('/*')) continue;
    actions.push({ text, line: template.slice(0, match.index).split('\n').length });
  }
  return actions;
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
