# label: hazard raises
# why: the entropy bonus clamps the softmax probabilities in place to avoid log(0), but softmax saved its output for backward.
import torch
import torch.nn as nn

torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 4))
obs = torch.randn(20, 5)
actions = torch.randint(0, 4, (20,))
returns = torch.randn(20)

logits = policy(obs)
probs = torch.softmax(logits, dim=-1)
probs.clamp_(min=1e-8)  # <-- IPL001: softmax output is needed by its backward
log_probs = probs.log()
entropy = -(probs * log_probs).sum(-1).mean()
pg_loss = -(log_probs.gather(1, actions[:, None]).squeeze(1) * returns).mean()
loss = pg_loss - 0.01 * entropy
loss.backward()
