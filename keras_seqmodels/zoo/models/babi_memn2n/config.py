"""Training configuration of babi-memn2n: the paper's PE LS RN joint model
(Sukhbaatar et al. 2015) with the options the authors' code differs by."""

CONFIG = {
    "epochs": 80,  # config_babi_joint.m: 30 of linear start + 60
    "batch_size": 32,
    "seed": 1,
    "embed_dim": 50,
    "hops": 3,
    "learning_rate": 0.01,  # the code's 0.005 goes with its ~2x position weights
    "anneal_every": 15,  # epochs after linear start
    "noise": 0.1,  # fraction of empty memories inserted
    "noise_gaps": False,  # true: time-index gaps (train.m); false: attended <nil> slots
    "ls_patience": 3,  # 0: linear start lasts ls_max_epochs
    "ls_max_epochs": 20,  # config_babi_joint.m: ls_nepochs = 30
    "position_form": "paper",  # "code": build_model.m's weights, J = 11 words + the time word
    "mask_empty_slots": True,  # false: empty slots are attended zero memories (the code)
    "clip": "global",  # "matrix": each tied matrix (Frobenius); "spectral": Weight.m's norm
    "tasks": "all",  # or task numbers, e.g. "16" or "1,16": train and evaluate on those only
}
