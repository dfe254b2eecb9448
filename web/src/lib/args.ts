// String arguments (a prompt's, a URI template's variables) as a form fills them in.

export interface Arg {
  name: string;
  required?: boolean;
  description?: string;
}

/** The form's starting values: every argument empty. */
export const emptyArgs = (args: Arg[]): Record<string, string> => Object.fromEntries(args.map((a) => [a.name, '']));

/** "Required." for each required argument left empty; none when the form can be sent. */
export function missingArgs(args: Arg[], values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(args.filter((a) => a.required && !values[a.name]).map((a) => [a.name, 'Required.']));
}

/** The values filled in: empty optional ones are left out, so that the server's own defaults apply. */
export function givenArgs(values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== ''));
}
