# label: hazard raises
# why: a full backward hook on the target conv wraps its output in a BackwardHookFunction view, and the following nn.ReLU(inplace=True) then modifies that view in place
# source: https://github.com/frgfm/torch-cam/pull/80
import torch
import torch.nn as nn

torch.manual_seed(0)


class _CAM:
    def __init__(self, model, target_layer):
        self.model = model
        self.hook_a = None
        self.hook_g = None
        self.hook_handles = []
        module = dict(model.named_modules())[target_layer]
        self.hook_handles.append(module.register_forward_hook(self._hook_a))
        self.hook_handles.append(module.register_full_backward_hook(self._hook_g))

    def _hook_a(self, module, input, output):
        self.hook_a = output.detach()

    def _hook_g(self, module, input, output):
        self.hook_g = output[0].detach()

    def compute_cams(self, class_idx, scores):
        self.model.zero_grad()
        loss = scores[:, class_idx].sum()
        loss.backward()
        weights = self.hook_g.mean(dim=(2, 3), keepdim=True)
        return torch.relu((weights * self.hook_a).sum(1))


model = nn.Sequential(
    nn.Conv2d(3, 4, 3, padding=1),
    nn.BatchNorm2d(4),
    nn.ReLU(inplace=True),  # <-- IPL001: modifies in place the hooked conv output (a BackwardHookFunction view)
    nn.Conv2d(4, 8, 3, padding=1),
    nn.ReLU(inplace=True),
    nn.AdaptiveAvgPool2d(1),
    nn.Flatten(),
    nn.Linear(8, 5),
)
model.eval()
cam_extractor = _CAM(model, "1")
img = torch.rand(1, 3, 8, 8)
scores = model(img)
cam = cam_extractor.compute_cams(2, scores)
