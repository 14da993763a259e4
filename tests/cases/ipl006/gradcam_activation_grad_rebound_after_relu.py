# label: hazard silent
# why: `acts` is rebound to the in-place ReLU result, so torch.autograd.grad returns the gradient w.r.t. the rectified activations instead of the pre-ReLU conv features Grad-CAM wanted.
import torch
import torch.nn as nn
import torch.nn.functional as F


class SmallCNN(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 3, padding=1)
        self.conv2 = nn.Conv2d(6, 8, 3, padding=1)
        self.fc = nn.Linear(8, num_classes)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        feats = self.conv2(x)
        acts = feats.relu_()  # <-- IPL006
        logits = self.fc(F.adaptive_avg_pool2d(acts, 1).flatten(1))
        return logits, feats


def grad_cam(model, images, class_idx):
    logits, feats = model(images)
    score = logits[:, class_idx].sum()
    (grads,) = torch.autograd.grad(score, feats, create_graph=True)
    weights = grads.mean(dim=(2, 3), keepdim=True)
    cam = F.relu((weights * feats).sum(dim=1))
    return logits, cam


torch.manual_seed(0)
model = SmallCNN()
images = torch.randn(2, 3, 5, 5)
logits, cam = grad_cam(model, images, class_idx=1)
target = torch.tensor([1, 3])
loss = F.cross_entropy(logits, target) + 0.1 * cam.mean()
loss.backward()
