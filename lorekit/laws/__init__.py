"""Laws of an environment mined from records, used as agent context and as RL rewards.

(Placeholder written by helper lawrew so its modules import before the merge;
helper lawsym owns this file.)
"""
