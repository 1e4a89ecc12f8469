"""ADaPT's scripted test models: they read ADaPT's prompts and answer in its formats
(sometimes wrongly), for the suite and for ``--simulate`` runs; registered per env by
:mod:`lorekit.agents.adapt.plugin`. They show a mechanism, never a model's ability.

- :mod:`.textcraft`: the TextCraft executor and planner (capability, noise);
- :mod:`.envs`: the ALFWorld and WebShop executors and the one-step planner, and the
  roles each env's scripted run gets;
- :mod:`.code`: the same in the authors' transcript form (``profile=code|paper``).
"""
