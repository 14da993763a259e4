# label: hazard raises
# why: mlp_feats is a view of the ReLU output of neigh_mlp (saved by ReluBackward); adding the agent embedding with += rewrites it, so the policy-gradient backward fails
# source: https://github.com/Eicmlye/labsurv (file labsurv/models/strategies/pointnet2_ac.py, SimpleConvActor: "NOTE(eric): don't know why but should not use += here, may raise inplace operation error")
from typing import List

import torch
from torch import Tensor
from torch.nn import Conv3d, Linear, Module, MultiheadAttention, ReLU, Sequential

torch.manual_seed(0)

H = 8


class SimpleConvActor(Module):
    def __init__(self, hidden_dim: int, cam_types: int, attn_head_num: int = 2):
        super().__init__()
        param_dim = 5 + cam_types
        action_dim = 10 + cam_types
        self.param_encoder = Sequential(Linear(param_dim + 1, hidden_dim), ReLU(), Linear(hidden_dim, H), ReLU())
        self.param_mlp = Sequential(Linear(H, 2 * H), ReLU(), Linear(2 * H, 2 * H), ReLU())
        self.backbone = [
            Sequential(Conv3d(3, 4, 3, 1, 1), ReLU()),
            Sequential(Conv3d(4, 2 * H, 3, 1, 1), ReLU()),
        ]
        self.neigh_attn = MultiheadAttention(embed_dim=2 * H, num_heads=attn_head_num)
        self.neigh_ff = Sequential(Linear(2 * H, 2 * H), ReLU())
        self.neigh_mlp = Sequential(Linear(2 * H, 2 * H), ReLU(), Linear(2 * H, H), ReLU())
        self.comm = Sequential(Linear(H, H), ReLU(), Linear(H, action_dim))
        self.out = Sequential(Linear(H, H), ReLU(), Linear(H, action_dim))

    def forward(self, self_and_neigh_params: Tensor, self_mask: Tensor, neigh: Tensor, room_shape: List[int]) -> Tensor:
        batch_size = self_mask.shape[0]
        neigh_agent_num = self_mask.shape[1]
        agent_params_with_pos = torch.concat((self_and_neigh_params, self_mask.unsqueeze(-1)), dim=-1)
        agent_embedding: Tensor = self.param_encoder(agent_params_with_pos)
        agent_output: Tensor = self.param_mlp(agent_embedding)

        unet_input = [neigh]
        for i in range(len(self.backbone)):
            conv_feats = self.backbone[i](unet_input[-1])
            unet_input.append(conv_feats)
        unet_output = unet_input[-1]

        attn_feats: Tensor = self.neigh_attn(
            query=agent_output.permute(1, 0, 2),
            key=unet_output.flatten(start_dim=2).permute(2, 0, 1),
            value=unet_output.flatten(start_dim=2).permute(2, 0, 1),
        )[0]
        attn_feats += agent_output.permute(1, 0, 2)
        attn_feats: Tensor = (
            self.neigh_ff(attn_feats.view(batch_size * neigh_agent_num, -1)).view(neigh_agent_num, batch_size, -1)
            + attn_feats
        )

        mlp_feats: Tensor = self.neigh_mlp(
            attn_feats.view(batch_size * neigh_agent_num, -1)
        ).view(neigh_agent_num, batch_size, -1)
        mlp_feats += agent_embedding.permute(1, 0, 2)  # <-- IPL001: view of ReLU output (saved for backward) modified in place

        comm: Tensor = self.comm(
            mlp_feats.permute(1, 0, 2)[torch.logical_not(self_mask).unsqueeze(-1).repeat(1, 1, H)].view(-1, neigh_agent_num - 1, H)
        ).mean(dim=1)
        out: Tensor = self.out(mlp_feats.permute(1, 0, 2)[self_mask.unsqueeze(-1).repeat(1, 1, H)].view(-1, H))
        return out + comm


cam_types = 2
actor = SimpleConvActor(hidden_dim=8, cam_types=cam_types)
params = torch.randn(2, 3, 5 + cam_types)
self_mask = torch.tensor([[True, False, False], [False, True, False]])
neigh = torch.randn(2, 3, 3, 3, 3)
logits = actor(params, self_mask, neigh, [5, 5, 5])
dist = torch.distributions.Categorical(logits=logits)
actions = torch.tensor([1, 4])
advantages = torch.tensor([0.5, -1.0])
policy_loss = -(dist.log_prob(actions) * advantages).mean()
policy_loss.backward()
