# label: hazard silent
# why: Grad-CAM asks backward(inputs=[feats]) for the conv features, but feats was rectified in place, so the gradient lands on the post-ReLU tensor instead of the conv output.
import torch
import torch.nn as nn

torch.manual_seed(0)
conv = nn.Conv2d(2, 4, 3)
fc = nn.Linear(4, 3)
img = torch.randn(1, 2, 7, 7)

feats = conv(img)
act = feats.relu_()  # <-- IPL006: feats is the tensor whose gradient is requested below
score = fc(act.mean((2, 3)))[0, 1]
score.backward(inputs=[feats])
weights = feats.grad.mean((2, 3), keepdim=True)
cam = (weights * feats.detach()).sum(1)
