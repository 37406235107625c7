declare module 'agent-host:plugin/model@0.2.11' {
  /**
   * Sends `messages` to the deployment's model and returns its reply; an error (naming
   * the grant, the budget or the deadline, or what the endpoint said) otherwise.
   */
  export function complete(messages: Array<ChatMessage>, options: CompleteOptions): Completion;
  /**
   * Who speaks a message.
   * # Variants
   * 
   * ## `"system"`
   * 
   * Instructions. Every system message is joined, in order, into the request's system
   * prompt.
   * ## `"user"`
   * 
   * The asking side.
   * ## `"assistant"`
   * 
   * The model's earlier answers, to continue a conversation.
   */
  export type ChatRole = 'system' | 'user' | 'assistant';
  /**
   * One message of the conversation sent to the model.
   */
  export interface ChatMessage {
    role: ChatRole,
    /**
     * The message's text.
     */
    content: string,
  }
  /**
   * How to ask.
   */
  export interface CompleteOptions {
    /**
     * The most tokens the reply may have; at most the grant's `model_tokens_per_call`,
     * which is what none means.
     */
    maxOutputTokens?: number,
  }
  /**
   * The model's answer.
   */
  export interface Completion {
    /**
     * The reply's text.
     */
    text: string,
    /**
     * Tokens of the request, as the endpoint counted them (0 when it did not say).
     */
    inputTokens: bigint,
    /**
     * Tokens of the reply, as the endpoint counted them (0 when it did not say).
     */
    outputTokens: bigint,
  }
}
