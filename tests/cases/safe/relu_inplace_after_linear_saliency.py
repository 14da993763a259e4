# label: safe
# why: relu_ acts on a linear output that nothing saved, and the saliency gradient is taken w.r.t. the untouched leaf input, not the rebound name
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
fc1 = nn.Linear(10, 20)
fc2 = nn.Linear(20, 4)
images = torch.randn(3, 10, requires_grad=True)

hidden = fc1(images)
hidden.relu_()
hidden2 = F.dropout(hidden, p=0.0, training=False)
logits = fc2(hidden2)
target = logits.argmax(dim=1)
score = logits.gather(1, target[:, None]).sum()

(saliency,) = torch.autograd.grad(score, images)
saliency_map = saliency.abs()
saliency_map.div_(saliency_map.amax(dim=1, keepdim=True) + 1e-12)
top_feature = saliency_map.argmax(dim=1)
