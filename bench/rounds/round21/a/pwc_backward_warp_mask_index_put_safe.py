# label: safe
# why: PWC-Net's Backward warp binarises the validity channel by index-assigning into tensorMask, a view of the grid_sample output; grid_sample saved its input and grid (not its output), and the multiply that consumes tensorMask runs after the writes, so no saved tensor is stale.
# source: https://github.com/sniklaus/pytorch-pwc/blob/05c172fa97dd1b0425e19c83fcb8d6f2e85aabb4/run.py
import torch

torch.manual_seed(0)


class Backward(torch.nn.Module):
    def __init__(self):
        super(Backward, self).__init__()

    def forward(self, tensorInput, tensorFlow):
        if hasattr(self, 'tensorPartial') == False or self.tensorPartial.size(0) != tensorFlow.size(0) or self.tensorPartial.size(2) != tensorFlow.size(2) or self.tensorPartial.size(3) != tensorFlow.size(3):
            self.tensorPartial = tensorFlow.new_ones(tensorFlow.size(0), 1, tensorFlow.size(2), tensorFlow.size(3))

        if hasattr(self, 'tensorGrid') == False or self.tensorGrid.size(0) != tensorFlow.size(0) or self.tensorGrid.size(2) != tensorFlow.size(2) or self.tensorGrid.size(3) != tensorFlow.size(3):
            tensorHorizontal = torch.linspace(-1.0, 1.0, tensorFlow.size(3)).view(1, 1, 1, tensorFlow.size(3)).expand(tensorFlow.size(0), -1, tensorFlow.size(2), -1)
            tensorVertical = torch.linspace(-1.0, 1.0, tensorFlow.size(2)).view(1, 1, tensorFlow.size(2), 1).expand(tensorFlow.size(0), -1, -1, tensorFlow.size(3))
            self.tensorGrid = torch.cat([tensorHorizontal, tensorVertical], 1)

        tensorInput = torch.cat([tensorInput, self.tensorPartial], 1)
        tensorFlow = torch.cat([tensorFlow[:, 0:1, :, :] / ((tensorInput.size(3) - 1.0) / 2.0), tensorFlow[:, 1:2, :, :] / ((tensorInput.size(2) - 1.0) / 2.0)], 1)

        tensorOutput = torch.nn.functional.grid_sample(input=tensorInput, grid=(self.tensorGrid + tensorFlow).permute(0, 2, 3, 1), mode='bilinear', padding_mode='zeros', align_corners=False)

        tensorMask = tensorOutput[:, -1:, :, :]; tensorMask[tensorMask > 0.999] = 1.0; tensorMask[tensorMask < 1.0] = 0.0

        return tensorOutput[:, :-1, :, :] * tensorMask


class Decoder(torch.nn.Module):
    def __init__(self, intChannels):
        super(Decoder, self).__init__()
        self.moduleUpflow = torch.nn.ConvTranspose2d(in_channels=2, out_channels=2, kernel_size=4, stride=2, padding=1)
        self.dblBackward = 1.25
        self.moduleBackward = Backward()
        self.moduleOne = torch.nn.Sequential(
            torch.nn.Conv2d(in_channels=intChannels * 2 + 2, out_channels=16, kernel_size=3, stride=1, padding=1),
            torch.nn.LeakyReLU(inplace=False, negative_slope=0.1),
            torch.nn.Conv2d(in_channels=16, out_channels=2, kernel_size=3, stride=1, padding=1),
        )

    def forward(self, tensorFirst, tensorSecond, tensorPrevFlow):
        tensorFlow = self.moduleUpflow(tensorPrevFlow)
        tensorWarped = self.moduleBackward(tensorSecond, tensorFlow * self.dblBackward)
        tensorFeat = torch.cat([tensorFirst, tensorWarped, tensorFlow], 1)
        return tensorFlow + self.moduleOne(tensorFeat)


def main():
    decoder = Decoder(intChannels=4)
    tensorFirst = torch.randn(2, 4, 16, 16)
    tensorSecond = torch.randn(2, 4, 16, 16, requires_grad=True)
    tensorPrevFlow = torch.randn(2, 2, 8, 8) * 2.0
    tensorFlow = decoder(tensorFirst, tensorSecond, tensorPrevFlow)
    target = torch.zeros_like(tensorFlow)
    loss = (tensorFlow - target).abs().mean()
    loss.backward()
    return tensorFlow.detach(), tensorSecond.grad, decoder.moduleUpflow.weight.grad


flow_out, second_grad, upflow_grad = main()
