# label: safe
# why: invalid actions are masked by subtracting 1e20 from the policy head's Linear output in place; Linear does not save its output, so the policy-gradient and baseline losses are unaffected.
# source: https://github.com/facebookresearch/RTFM/blob/52e24a3c2cc2bd4e8341f5ca1ec323bf13a0156f/model/reader.py
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Reader(nn.Module):
    def __init__(self, demb=8, num_actions=5):
        super().__init__()
        self.num_actions = num_actions
        self.encode_cell = nn.Linear(6, demb)
        self.encode_wiki = nn.Linear(6, demb)
        self.fuse = nn.Sequential(nn.Linear(2 * demb, demb), nn.Tanh())
        self.policy = nn.Linear(demb, num_actions)
        self.baseline = nn.Linear(demb, 1)

    def forward(self, inputs):
        T, B = inputs['cell'].shape[:2]
        cell = self.encode_cell(inputs['cell'].view(T * B, -1))
        wiki = self.encode_wiki(inputs['wiki'].view(T * B, -1))
        rep = self.fuse(torch.cat([cell, wiki], dim=-1))

        policy_logits = self.policy(rep)
        baseline = self.baseline(rep)

        # mask out invalid actions
        action_mask = inputs['valid'].float().view(T * B, -1)
        policy_logits -= (1 - action_mask) * 1e20
        if self.training:
            action = torch.multinomial(F.softmax(policy_logits, dim=1), num_samples=1)
        else:
            # Don't sample when testing.
            action = torch.argmax(policy_logits, dim=1)

        policy_logits = policy_logits.view(T, B, self.num_actions)
        baseline = baseline.view(T, B)
        action = action.view(T, B)
        return dict(policy_logits=policy_logits, baseline=baseline, action=action)


model = Reader()
T, B = 3, 2
valid = torch.ones(T, B, 5, dtype=torch.bool)
valid[..., 4] = False
inputs = {'cell': torch.randn(T, B, 6), 'wiki': torch.randn(T, B, 6), 'valid': valid}
out = model(inputs)
returns = torch.randn(T, B)
log_probs = F.log_softmax(out['policy_logits'], dim=-1).gather(-1, out['action'].unsqueeze(-1)).squeeze(-1)
advantages = (returns - out['baseline']).detach()
pg_loss = -(log_probs * advantages).mean()
baseline_loss = 0.5 * ((returns - out['baseline']) ** 2).mean()
total_loss = pg_loss + baseline_loss
total_loss.backward()
