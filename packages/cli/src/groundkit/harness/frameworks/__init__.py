"""Framework kinds: LangChain, LlamaIndex and Haystack objects as stages (extras)."""
