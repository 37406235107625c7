/// <reference path="./agent-host-plugin-types.d.ts" />
declare module 'agent-host:plugin/compactor@0.2.11' {
  /**
   * Once per load, after `configure`, with the configuration it returned.
   */
  export function spec(config: Json): CompactorSpec;
  /**
   * Compacts `history` (what is sent now) within `budget`: a result, none when there is
   * nothing to do at this size, or an error saying why (the host then truncates). It may
   * ask the model (the `model` import) for a summary, within its deadline.
   */
  export function compact(ctx: CallContext, history: Array<HistoryMessage>, budget: CompactionBudget): Compaction | undefined;
  /**
   * Before any compaction: a veto, or messages to keep.
   */
  export function preCompact(ctx: CallContext, budget: CompactionBudget): PreCompactOutcome;
  /**
   * After a compaction was committed.
   */
  export function postCompact(ctx: CallContext, done: Compacted): void;
  export type Json = import('agent-host:plugin/types@0.2.11').Json;
  export type CallContext = import('agent-host:plugin/types@0.2.11').CallContext;
  /**
   * Which of this interface's functions the plugin really implements. The host never
   * calls the others.
   */
  export interface CompactionHooks {
    /**
     * `compact` replaces a prefix of the history. At most one loaded plugin may.
     */
    compact?: boolean,
    /**
     * `pre-compact` may veto a compaction or name messages that must survive it.
     */
    preCompact?: boolean,
    /**
     * `post-compact` hears what a compaction did (to refresh derived state).
     */
    postCompact?: boolean,
  }
  /**
   * What this plugin does in compaction under its configuration.
   */
  export interface CompactorSpec {
    hooks: CompactionHooks,
    /**
     * For a plugin that implements `compact`: the share of the room a request has
     * (`context-window` less `max-output-tokens`), in percent, past which the host asks it
     * to compact. None leaves the host's own `[compaction] trigger_percent`.
     */
    triggerPercent?: number,
  }
  /**
   * Names a message of what is sent now: a stored message by its position in the history
   * (from 0), or a summary an earlier compaction wrote, by its number.
   */
  export type MessageId = MessageIdMessage | MessageIdSummary;
  export interface MessageIdMessage {
    tag: 'message',
    val: bigint,
  }
  export interface MessageIdSummary {
    tag: 'summary',
    val: bigint,
  }
  /**
   * Who speaks a message of the history.
   * # Variants
   * 
   * ## `"system"`
   * 
   * ## `"user"`
   * 
   * ## `"assistant"`
   * 
   * ## `"tool"`
   * 
   * A tool's result.
   */
  export type MessageRole = 'system' | 'user' | 'assistant' | 'tool';
  /**
   * A tool call an assistant message makes.
   */
  export interface RequestedCall {
    /**
     * The call's id; the result answering it carries it as `tool-call-id`.
     */
    id: string,
    /**
     * The tool's name.
     */
    name: string,
    /**
     * The arguments, as the model sent them (JSON text).
     */
    arguments: string,
  }
  /**
   * One message of what is sent now, in order.
   */
  export interface HistoryMessage {
    id: MessageId,
    role: MessageRole,
    content: string,
    /**
     * The calls an assistant message makes; empty otherwise.
     */
    toolCalls: Array<RequestedCall>,
    /**
     * For a tool result, the id of the call it answers.
     */
    toolCallId?: string,
    /**
     * Its size in tokens, as the host estimates it.
     */
    tokens: number,
  }
  /**
   * Why the host compacts.
   * # Variants
   * 
   * ## `"threshold"`
   * 
   * The next request's estimate passed the trigger.
   * ## `"requested"`
   * 
   * The operator asked (`/compact`).
   * ## `"context-too-long"`
   * 
   * The endpoint refused the last request as longer than its context.
   */
  export type CompactionReason = 'threshold' | 'requested' | 'context-too-long';
  /**
   * The numbers a compaction works to, in tokens as the host estimates them.
   */
  export interface CompactionBudget {
    reason: CompactionReason,
    /**
     * The model's context window.
     */
    contextWindow: number,
    /**
     * What of the window the reply may take.
     */
    maxOutputTokens: number,
    /**
     * What every request carries besides the history: the system prompt, the tools and
     * the injected messages.
     */
    fixedTokens: number,
    /**
     * The history's tokens now, all messages sent.
     */
    historyTokens: number,
    /**
     * The most the history may take after the compaction. A result over it is not used.
     */
    limit: number,
    /**
     * What the host's own truncation brings the history down to.
     */
    target: number,
    /**
     * Messages the `pre-compact` hooks asked to keep; a result that drops one is not used.
     */
    keep: Array<MessageId>,
  }
  /**
   * A new message a compaction writes (a summary, or a shorter stand-in for old tool
   * calls). Plain text: it can neither call a tool nor be a tool's result.
   */
  export interface SummaryMessage {
    role: MessageRole,
    content: string,
  }
  /**
   * One entry of what is sent in place of the prefix a compaction replaces.
   */
  export type Replacement = ReplacementKeep | ReplacementSummary;
  /**
   * A message sent now, kept as it is. Kept messages stay in their order.
   */
  export interface ReplacementKeep {
    tag: 'keep',
    val: MessageId,
  }
  /**
   * A new message.
   */
  export interface ReplacementSummary {
    tag: 'summary',
    val: SummaryMessage,
  }
  /**
   * What a compaction returns: the first `replaces` messages sent are replaced by
   * `entries`; the messages after them stay as they are.
   */
  export interface Compaction {
    replaces: number,
    entries: Array<Replacement>,
    /**
     * One line on what it did, for the `compacted` event ("summarised 40 messages").
     */
    note: string,
  }
  /**
   * What a `pre-compact` hook says.
   */
  export interface PreCompactOutcome {
    /**
     * Not now; the text says why. Honoured while the request still fits the window:
     * past that (or after the endpoint refused a request as too long) the host
     * compacts anyway and says so.
     */
    veto?: string,
    /**
     * Messages that must survive this compaction.
     */
    keep: Array<MessageId>,
  }
  /**
   * What a compaction did, for the `post-compact` hooks.
   */
  export interface Compacted {
    reason: CompactionReason,
    /**
     * Who compacted: the plugin's name, or `truncate` for the host's own truncation.
     */
    strategy: string,
    /**
     * The compactor's note, or why the host truncated instead.
     */
    note: string,
    /**
     * The history's tokens before and after.
     */
    tokensBefore: number,
    tokensAfter: number,
    /**
     * How many messages sent before were replaced, and how many new ones replaced them.
     */
    replaced: number,
    summaries: number,
  }
}
