"""The assistant's agents: operator Q&A, the authoring assistant and the draft reviewer."""
