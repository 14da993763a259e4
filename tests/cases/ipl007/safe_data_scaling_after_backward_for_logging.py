# label: safe
# why: the probabilities are rescaled to percentages through .data only after loss.backward() has consumed the graph, so no pending backward can observe the write.
import torch
import torch.nn as nn

torch.manual_seed(0)

clf = nn.Linear(5, 3)
x = torch.randn(9, 5)
y = torch.randint(0, 3, (9,))

probs = torch.softmax(clf(x), dim=-1)
loss = -torch.log(probs.gather(1, y[:, None])).mean()
loss.backward()
w_grad = clf.weight.grad.clone()

probs.data.mul_(100.0)
confidence_pct = probs.max(dim=1).values.detach()
