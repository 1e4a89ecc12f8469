"""Teams of agents in one shared world (S-Agents)."""
