package checks

// ssebench's fixed names, ports and users (docs/ssebench.md): what a
// deployment looks like whatever backend runs it.
const (
	ServiceProxy = "litellm"    // the LiteLLM proxy's service and DNS name
	ServiceDB    = "litellm_db" // its database
	ProxyPort    = 4000
	DaemonPort   = 4263 // each run's daemon, agent-facing
	DBPort       = 5432

	// The users on the agent's side of a run: the agent itself (model,
	// uid 1000) and the task scripts' user, where the image has one.
	AgentUser  = "1000:1000"
	RunnerUser = "sse-runner"
)
