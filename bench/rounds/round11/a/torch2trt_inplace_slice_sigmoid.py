# label: hazard raises
# why: y[:, 0:2] is overwritten in place after sigmoid saved y as its output for backward, so training through this module fails.
# source: https://github.com/NVIDIA-AI-IOT/torch2trt/issues/480
import torch

torch.manual_seed(0)


class InplaceSliceSet(torch.nn.Module):

    def forward(self, x):
        y = torch.sigmoid(x)  # sigmoid, just so there is some layer
        y[:, 0:2] = torch.sigmoid(y[:, 0:2])  # <-- IPL001: overwrites the sigmoid output saved for SigmoidBackward
        return y


module = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 1), InplaceSliceSet())
x = torch.randn(1, 3, 4, 4)
out = module(x)
loss = out.pow(2).mean()
loss.backward()
