"""The harness for real agents: the only part of the simulator that does input and output.

Owns: playing the model's Client against an Agent process over stdio, run by run, with every line
recorded and checked live (``drive``), and the line pump and transcript writer that ``record``
and ``drive`` share (``proxy``). The peers and the explorers stay sans-IO; the command line
(``cli.cmd_drive``, ``cli.cmd_record``) parses arguments and calls into here.
"""
