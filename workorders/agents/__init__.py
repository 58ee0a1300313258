"""The maintenance agents: Investigator, Work Order Generator, KB builder and KB Q&A."""
