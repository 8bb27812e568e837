"""SimLab's parts: the worlds and the truth (``world``), reading a run at budget marks and the summary
statistics (``marks``), the efficiency setups (``efficiency``) and their report (``report``).

``benchmarks/train.py`` is the command; it puts ``benchmarks/`` on the path as a script does.
"""
