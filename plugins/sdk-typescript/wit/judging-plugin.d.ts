/// <reference path="./interfaces/agent-host-plugin-agents.d.ts" />
/// <reference path="./interfaces/agent-host-plugin-compactor.d.ts" />
/// <reference path="./interfaces/agent-host-plugin-edits.d.ts" />
/// <reference path="./interfaces/agent-host-plugin-events.d.ts" />
/// <reference path="./interfaces/agent-host-plugin-guest.d.ts" />
/// <reference path="./interfaces/agent-host-plugin-history.d.ts" />
/// <reference path="./interfaces/agent-host-plugin-hook-filter.d.ts" />
/// <reference path="./interfaces/agent-host-plugin-judge.d.ts" />
/// <reference path="./interfaces/agent-host-plugin-log.d.ts" />
/// <reference path="./interfaces/agent-host-plugin-meter.d.ts" />
/// <reference path="./interfaces/agent-host-plugin-model.d.ts" />
/// <reference path="./interfaces/agent-host-plugin-process.d.ts" />
/// <reference path="./interfaces/agent-host-plugin-reuse.d.ts" />
/// <reference path="./interfaces/agent-host-plugin-state.d.ts" />
/// <reference path="./interfaces/agent-host-plugin-tools.d.ts" />
/// <reference path="./interfaces/agent-host-plugin-types.d.ts" />
/// <reference path="./interfaces/agent-host-plugin-viewer.d.ts" />
declare module 'agent-host:plugin/judging-plugin@0.2.11' {
  export type * as AgentHostPluginAgents0211 from 'agent-host:plugin/agents@0.2.11'; // import agent-host:plugin/agents@0.2.11
  export type * as AgentHostPluginEdits0211 from 'agent-host:plugin/edits@0.2.11'; // import agent-host:plugin/edits@0.2.11
  export type * as AgentHostPluginEvents0211 from 'agent-host:plugin/events@0.2.11'; // import agent-host:plugin/events@0.2.11
  export type * as AgentHostPluginHistory0211 from 'agent-host:plugin/history@0.2.11'; // import agent-host:plugin/history@0.2.11
  export type * as AgentHostPluginHookFilter0211 from 'agent-host:plugin/hook-filter@0.2.11'; // import agent-host:plugin/hook-filter@0.2.11
  export type * as AgentHostPluginLog0211 from 'agent-host:plugin/log@0.2.11'; // import agent-host:plugin/log@0.2.11
  export type * as AgentHostPluginMeter0211 from 'agent-host:plugin/meter@0.2.11'; // import agent-host:plugin/meter@0.2.11
  export type * as AgentHostPluginModel0211 from 'agent-host:plugin/model@0.2.11'; // import agent-host:plugin/model@0.2.11
  export type * as AgentHostPluginProcess0211 from 'agent-host:plugin/process@0.2.11'; // import agent-host:plugin/process@0.2.11
  export type * as AgentHostPluginReuse0211 from 'agent-host:plugin/reuse@0.2.11'; // import agent-host:plugin/reuse@0.2.11
  export type * as AgentHostPluginState0211 from 'agent-host:plugin/state@0.2.11'; // import agent-host:plugin/state@0.2.11
  export type * as AgentHostPluginTools0211 from 'agent-host:plugin/tools@0.2.11'; // import agent-host:plugin/tools@0.2.11
  export type * as AgentHostPluginTypes0211 from 'agent-host:plugin/types@0.2.11'; // import agent-host:plugin/types@0.2.11
  export * as judge from 'agent-host:plugin/judge@0.2.11'; // export agent-host:plugin/judge@0.2.11
  export * as viewer from 'agent-host:plugin/viewer@0.2.11'; // export agent-host:plugin/viewer@0.2.11
  export * as compactor from 'agent-host:plugin/compactor@0.2.11'; // export agent-host:plugin/compactor@0.2.11
  export * as guest from 'agent-host:plugin/guest@0.2.11'; // export agent-host:plugin/guest@0.2.11
}
