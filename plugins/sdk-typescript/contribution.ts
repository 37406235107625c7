/** What `provide` adds before a model call, built by the plugin's `provide` hook. */

import { reusable } from "./host.ts";
import type { Contributed, InjectedMessage, ToolSpec } from "./types.ts";

/** Instructions and injected messages, after the tools whose spec depends on state (listed by
 * the SDK before the hook runs). */
export class Contribution {
  private text?: string;
  private readonly messages: InjectedMessage[] = [];

  constructor(private readonly tools: ToolSpec[] = []) {}

  /** Adds text to the system prompt. */
  instructions(text: string): this {
    this.text = text;
    return this;
  }

  /** Injects a message into this model call only. */
  inject(content: string, role: "system" | "user" = "system"): this {
    this.messages.push({ role, content });
    return this;
  }

  /** Says this contribution depends only on the configuration and the state read, so the
   * host reuses it until that state changes. Not for one that reads the session id, the
   * clock or files. */
  reusable(): this {
    reusable();
    return this;
  }

  /** What it contributes. */
  contributed(): Contributed {
    return { instructions: this.text, tools: [...this.tools], messages: [...this.messages] };
  }
}
