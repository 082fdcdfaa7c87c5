"""Chrysalis inside the agent frameworks people already run (docs/integrations.md).

- `chrysalis.integrations.langgraph`: `ChrysalisStore`, LangGraph's `BaseStore`;
- `chrysalis.integrations.openai_agents`: `ChrysalisSession`, the OpenAI Agents SDK's session.

Each module imports its framework, so install the ``integrations`` extra first
(``pip install -e '.[integrations]'``); this package imports neither. Both reach the memory
through the daemon's socket, never the storage engine.
"""
