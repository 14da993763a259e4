# label: hazard raises
# why: get_prob_a divides each child probability _prob in place by norm[blk_idx], but _prob is the output of .prod(-1), whose backward needs that result, so the topology-entropy loss cannot be backpropagated.
# source: https://github.com/Project-MONAI/MONAI/commit/07e14442ee088b84381aded7828b67af00d6018c
import itertools

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class TopologySearch(nn.Module):
    def __init__(self, num_blocks=3, num_paths=3):
        super().__init__()
        self.num_blocks = num_blocks
        self.device = "cpu"
        # every non-empty path activation pattern is a child model
        child_list = [c for c in itertools.product([0, 1], repeat=num_paths) if sum(c) > 0]
        self.child_list = np.array(child_list)
        self.log_alpha_a = nn.Parameter(torch.zeros(self.num_blocks, num_paths).normal_(1, 0.01), requires_grad=True)
        self._arch_param_names = ["log_alpha_a"]

    def get_prob_a(self, child: bool = False):
        _arch_code_prob_a = torch.sigmoid(self.log_alpha_a)
        # remove the case where all path are zero, and re-normalize.
        norm = 1 - (1 - _arch_code_prob_a).prod(-1)
        arch_code_prob_a = _arch_code_prob_a / norm.unsqueeze(1)
        if child:
            path_activation = torch.from_numpy(self.child_list).to(self.device)
            probs_a = []
            for blk_idx in range(self.num_blocks):
                arch_prob = _arch_code_prob_a[blk_idx]
                _prob = (path_activation * arch_prob + (1 - path_activation) * (1 - arch_prob)).prod(-1)
                _prob /= norm[blk_idx]  # <-- IPL001: _prob is the prod() result saved for its backward
                probs_a.append(_prob)
            probs_a = torch.stack(probs_a)  # type: ignore
            return probs_a, arch_code_prob_a
        return None, arch_code_prob_a

    def get_topology_entropy(self, probs):
        ent = 0
        for blk_idx in range(self.num_blocks - 1):
            _node_p = probs[blk_idx]
            _out_probs = probs[blk_idx + 1]
            blk_ent = -(_node_p * torch.log(_out_probs + 1e-5) + (1 - _node_p) * torch.log(1 - _out_probs + 1e-5)).sum()
            ent += blk_ent
        return ent


model = TopologySearch()
a_optimizer = torch.optim.Adam([model.log_alpha_a], lr=0.001, betas=(0.5, 0.999))
a_optimizer.zero_grad()
probs_a, arch_code_prob_a = model.get_prob_a(child=True)
entropy_alpha_a = -((probs_a) * torch.log(probs_a + 1e-5)).mean()
entropy_alpha_c = model.get_topology_entropy(probs_a)
loss_arch = 0.001 * entropy_alpha_a + 0.001 * entropy_alpha_c + arch_code_prob_a.mean()
loss_arch.backward()
a_optimizer.step()
