/// <reference path="./agent-host-plugin-types.d.ts" />
declare module 'agent-host:plugin/viewer@0.2.11' {
  /**
   * Once per load, after `configure`, with the configuration it returned: whether this
   * plugin shows a view under it. The host never calls `view` of one that does not.
   */
  export function shows(config: Json): boolean;
  /**
   * What the plugin shows now, read from the session's state. Its state writes and events
   * are discarded.
   */
  export function view(ctx: CallContext): Array<Widget>;
  export type Json = import('agent-host:plugin/types@0.2.11').Json;
  export type CallContext = import('agent-host:plugin/types@0.2.11').CallContext;
  /**
   * Where an entry of a checklist stands. One to one with a plan entry's status in the
   * Agent Client Protocol and a plan step's in codex.
   * # Variants
   * 
   * ## `"pending"`
   * 
   * ## `"in-progress"`
   * 
   * ## `"completed"`
   */
  export type EntryState = 'pending' | 'in-progress' | 'completed';
  /**
   * One entry of a checklist.
   */
  export interface ChecklistEntry {
    /**
     * What is to be done, in the imperative ("Write the tests").
     */
    title: string,
    state: EntryState,
    /**
     * While in progress, what is being done ("Writing the tests"), if the plugin says.
     */
    activeForm?: string,
    /**
     * More about the entry (a note, an owner), shown beside or under the title.
     */
    detail?: string,
  }
  /**
   * A list of things to do, each with where it stands: a plan.
   */
  export interface Checklist {
    /**
     * A stable id, unique among this plugin's widgets (`plan`).
     */
    id: string,
    /**
     * Its heading, for a person ("Todos").
     */
    label: string,
    entries: Array<ChecklistEntry>,
  }
  /**
   * One value a choice may take.
   */
  export interface ChoiceOption {
    /**
     * The value, as the switch command takes it (`execute`).
     */
    value: string,
    /**
     * How a person should see it (`Execute`).
     */
    label: string,
    /**
     * One line on what it means, if the plugin says.
     */
    description?: string,
  }
  /**
   * One value out of a few: a mode, a stage, a preset.
   */
  export interface Choice {
    /**
     * A stable id, unique among this plugin's widgets (`mode`).
     */
    id: string,
    /**
     * Its name, for a person ("Mode").
     */
    label: string,
    /**
     * The value it has now (one of `options`), or none when it has none yet.
     */
    current?: string,
    options: Array<ChoiceOption>,
    /**
     * How an operator moves it: a command line (`/mode`) the host runs with the chosen
     * option's value appended after a space (`/mode execute`). A front end offers a
     * switcher only for a choice that has one, and the host runs it only with a value
     * the view lists. None when only the model may move it.
     */
    command?: string,
    /**
     * What kind of setting it is, when it is one a front end has a place for: `mode`
     * (an editor's session modes), `model`, `thought-level`. None for any other.
     */
    category?: string,
  }
  /**
   * Anything else, as markdown.
   */
  export interface TextSection {
    /**
     * A stable id, unique among this plugin's widgets.
     */
    id: string,
    /**
     * Its heading, for a person.
     */
    label: string,
    /**
     * The section's text, in markdown. Front ends render it as text, never as markup.
     */
    markdown: string,
  }
  /**
   * One thing a plugin shows.
   */
  export type Widget = WidgetChecklist | WidgetChoice | WidgetText;
  export interface WidgetChecklist {
    tag: 'checklist',
    val: Checklist,
  }
  export interface WidgetChoice {
    tag: 'choice',
    val: Choice,
  }
  export interface WidgetText {
    tag: 'text',
    val: TextSection,
  }
}
