/**
 * What front ends show of a plugin (contract 0.2.4, the `viewer` export): typed widgets a
 * front end draws without knowing the plugin, returned from the function given to
 * `Plugin.view`: a checklist as a plan, a choice with a command as a switcher, text. The
 * builders make the `Widget`s a test compares a view with.
 */

/** Where an entry of a checklist stands. */
export type EntryState = "pending" | "in-progress" | "completed";

export interface ChoiceOption {
  /** As the switch command takes it. */
  value: string;
  label: string;
  description?: string;
}

/** One value out of a few: a mode, a stage, a preset. */
export interface ChoiceWidget {
  id: string;
  label: string;
  current?: string;
  options: ChoiceOption[];
  command?: string;
  category?: string;
}

export interface ChecklistEntry {
  title: string;
  state: EntryState;
  activeForm?: string;
  detail?: string;
}

/** A list of things to do, each with where it stands: a plan. */
export interface ChecklistWidget {
  id: string;
  label: string;
  entries: ChecklistEntry[];
}

/** Anything else, as markdown. */
export interface TextWidget {
  id: string;
  label: string;
  markdown: string;
}

/** One thing a plugin shows. */
export type Widget =
  | { tag: "choice"; val: ChoiceWidget }
  | { tag: "checklist"; val: ChecklistWidget }
  | { tag: "text"; val: TextWidget };

/** `{ [key]: text }` when `text` is not blank, else nothing: a widget leaves out what it
 * does not say, so a test compares it with a literal that leaves it out too. */
function nonBlank<K extends string>(key: K, text?: string): { [P in K]?: string } {
  return text && text.trim() ? ({ [key]: text } as { [P in K]?: string }) : {};
}

/** One value out of a few (a mode, a stage). With a command a front end offers a switcher
 * that runs it with the chosen value appended; without, only the model moves it. */
export class Choice {
  private readonly choice: ChoiceWidget;

  constructor(id: string, label: string, current?: string) {
    this.choice = { id, label, ...(current === undefined ? {} : { current }), options: [] };
  }

  option(value: string, label: string, description?: string): this {
    this.choice.options.push({ value, label, ...nonBlank("description", description) });
    return this;
  }

  command(command: string): this {
    this.choice.command = command;
    return this;
  }

  /** What kind of setting it is where a front end has a place for it: `mode`, `model`,
   * `thought-level`. */
  category(category: string): this {
    this.choice.category = category;
    return this;
  }

  widget(): Widget {
    return { tag: "choice", val: this.choice };
  }
}

/** A list of things to do, each with where it stands: a plan. */
export class Checklist {
  private readonly checklist: ChecklistWidget;

  constructor(id: string, label: string) {
    this.checklist = { id, label, entries: [] };
  }

  entry(title: string, state: EntryState, more: { activeForm?: string; detail?: string } = {}): this {
    this.checklist.entries.push({
      title,
      state,
      ...nonBlank("activeForm", more.activeForm),
      ...nonBlank("detail", more.detail),
    });
    return this;
  }

  widget(): Widget {
    return { tag: "checklist", val: this.checklist };
  }
}

/** Anything else, as markdown (front ends render it as text, never as markup). */
export class Text {
  constructor(
    private readonly id: string,
    private readonly label: string,
    private readonly markdown: string,
  ) {}

  widget(): Widget {
    return { tag: "text", val: { id: this.id, label: this.label, markdown: this.markdown } };
  }
}

/** What a view function may return: the builders, or widgets. */
export type Shown = Choice | Checklist | Text | Widget;

export function widgets(items: Shown[]): Widget[] {
  return items.map((item) => ("widget" in item && typeof item.widget === "function" ? item.widget() : (item as Widget)));
}
