"""The model roles' prompts: what each template gets, the templates themselves, and how replies are read."""
