"""Text: the spaCy pipeline and its parse cache, quote resolution, the lexical detector."""
