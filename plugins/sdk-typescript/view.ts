/**
 * What front ends show of a plugin (contract 0.2.4, the `viewer` export): typed widgets a
 * front end draws without knowing the plugin, returned from the function given to
 * `Plugin.view`: a checklist as a plan, a choice with a command as a switcher, text.
 */

import type { EntryState, Widget } from "agent-host:plugin/viewer@0.2.7";

export type { EntryState, Widget };

function nonBlank(text?: string): string | undefined {
  return text && text.trim() ? text : undefined;
}

/** One value out of a few (a mode, a stage). With a command a front end offers a switcher
 * that runs it with the chosen value appended; without, only the model moves it. */
export class Choice {
  private readonly choice: Extract<Widget, { tag: "choice" }>["val"];

  constructor(id: string, label: string, current?: string) {
    this.choice = { id, label, current, options: [] };
  }

  option(value: string, label: string, description?: string): this {
    this.choice.options.push({ value, label, description: nonBlank(description) });
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
  private readonly checklist: Extract<Widget, { tag: "checklist" }>["val"];

  constructor(id: string, label: string) {
    this.checklist = { id, label, entries: [] };
  }

  entry(title: string, state: EntryState, more: { activeForm?: string; detail?: string } = {}): this {
    this.checklist.entries.push({
      title,
      state,
      activeForm: nonBlank(more.activeForm),
      detail: nonBlank(more.detail),
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

/** What a view function may return: the builders, or the contract's widgets. */
export type Shown = Choice | Checklist | Text | Widget;

export function widgets(items: Shown[]): Widget[] {
  return items.map((item) => ("widget" in item && typeof item.widget === "function" ? item.widget() : (item as Widget)));
}
