# label: hazard silent
# why: cast_inputs_to_pt returns the caller's tensor unchanged, so `x_tensor /= norm_factor` rescales the attack's x_adv in place on every loss_gradient call and the PGD iterate drifts silently
# source: https://github.com/Trusted-AI/adversarial-robustness-toolbox/commit/52f64a838300f4d862c6ea329b356c13093a4172
import torch
import torch.nn as nn

torch.manual_seed(0)


def cast_inputs_to_pt(x, y=None):
    x_tensor = x if isinstance(x, torch.Tensor) else torch.as_tensor(x)
    y_tensor = None
    if isinstance(y, list):
        y_tensor = [{"boxes": y_i["boxes"].float(), "labels": y_i["labels"].long()} for y_i in y]
    return x_tensor, y_tensor


class TinyDetector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Conv2d(3, 4, 3, padding=1)
        self.box_head = nn.Linear(4, 4)

    def forward(self, x):
        feat = torch.relu(self.backbone(x)).mean(dim=(2, 3))
        return self.box_head(feat)


class PyTorchYolo:
    def __init__(self, model, clip_values=(0.0, 255.0), channels_first=False):
        self._model = model
        self.clip_values = clip_values
        self.channels_first = channels_first

    def _preprocess_and_convert_inputs(self, x, y=None, no_grad=True):
        norm_factor = self.clip_values[1] if self.clip_values is not None else 1.0
        x_tensor, y_tensor = cast_inputs_to_pt(x, y)
        if not self.channels_first:
            x_tensor = torch.permute(x_tensor, (0, 3, 1, 2))
        x_tensor /= norm_factor  # <-- IPL004: divides the caller's image tensor (through the permute view) in place
        if not no_grad:
            if x_tensor.is_leaf:
                x_tensor.requires_grad = True
            else:
                x_tensor.retain_grad()
        return x_tensor, y_tensor

    def loss_gradient(self, x, y):
        x_preprocessed, y_preprocessed = self._preprocess_and_convert_inputs(x, y, no_grad=False)
        pred = self._model(x_preprocessed)
        target = torch.stack([t["boxes"][0] for t in y_preprocessed])
        loss = nn.functional.smooth_l1_loss(pred, target)
        grads = torch.autograd.grad(loss, x_preprocessed)[0]
        return grads.permute(0, 2, 3, 1)


estimator = PyTorchYolo(TinyDetector())
images = torch.rand(2, 5, 5, 3) * 255.0
labels = [{"boxes": torch.tensor([[1.0, 1.0, 3.0, 3.0]]), "labels": torch.tensor([0])} for _ in range(2)]

eps_step, eps = 4.0, 16.0
x_adv = images.clone()
for _ in range(3):
    grad = estimator.loss_gradient(x_adv, labels)
    x_adv = torch.min(torch.max(x_adv + eps_step * grad.sign(), images - eps), images + eps).clamp(0.0, 255.0)

perturbation = x_adv - images
