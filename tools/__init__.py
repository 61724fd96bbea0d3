"""Developer tools: tools/compile_engine.py compiles the engine with mypyc."""
