"""The harness for real agents: the only part of the simulator that does input and output.

Owns: playing the model's Client against an Agent process over stdio, run by run, with every line
recorded and checked live (``drive``, ``campaign``), the transparent proxy of ``record`` with the
line pump and transcript writer that ``record`` and ``drive`` share (``proxy``), the Agent's child
process (``child``: starting it, its pipes, time-outs and how it ended) and the model served as an
Agent (``serve``). The peers and the explorers stay sans-IO; the command line
(``cli.cmd_drive``, ``cli.cmd_record``, ``cli.cmd_agent``) parses arguments and calls into here.
"""
