# label: safe
# why: ControlNetModel.forward did `sample += controlnet_cond` on the conv_in output and `mid_block_res_sample *= scales[-1]` on the mid-block conv output; conv saves its input and weight, not its output, and the logspace scales never require grad, so eager gradients equal the out-of-place version (the change was made only to avoid torch.compile graph breaks).
# source: https://github.com/huggingface/diffusers/commit/5c7a35a25915f29aa79e5b69d831fd0f7d7d8d41 (PR #3313, src/diffusers/models/controlnet.py before the change)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ControlNetConditioningEmbedding(nn.Module):
    def __init__(self, conditioning_embedding_channels, conditioning_channels=3, block_out_channels=(4, 8)):
        super().__init__()
        self.conv_in = nn.Conv2d(conditioning_channels, block_out_channels[0], kernel_size=3, padding=1)
        self.blocks = nn.ModuleList([nn.Conv2d(block_out_channels[0], block_out_channels[1], kernel_size=3, padding=1)])
        self.conv_out = nn.Conv2d(block_out_channels[-1], conditioning_embedding_channels, kernel_size=3, padding=1)

    def forward(self, conditioning):
        embedding = F.silu(self.conv_in(conditioning))
        for block in self.blocks:
            embedding = F.silu(block(embedding))
        return self.conv_out(embedding)


class DownBlock2D(nn.Module):
    def __init__(self, channels, temb_channels):
        super().__init__()
        self.norm = nn.GroupNorm(2, channels)
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.time_emb_proj = nn.Linear(temb_channels, channels)
        self.downsampler = nn.Conv2d(channels, channels, 3, stride=2, padding=1)

    def forward(self, hidden_states, temb):
        h = self.conv(F.silu(self.norm(hidden_states))) + self.time_emb_proj(F.silu(temb))[:, :, None, None]
        hidden_states = hidden_states + h
        output_states = (hidden_states,)
        hidden_states = self.downsampler(hidden_states)
        output_states += (hidden_states,)
        return hidden_states, output_states


class ControlNetModel(nn.Module):
    def __init__(self, in_channels=4, channels=8, temb_channels=16):
        super().__init__()
        self.conv_in = nn.Conv2d(in_channels, channels, kernel_size=3, padding=1)
        self.time_embedding = nn.Linear(1, temb_channels)
        self.controlnet_cond_embedding = ControlNetConditioningEmbedding(channels)
        self.down_blocks = nn.ModuleList([DownBlock2D(channels, temb_channels)])
        self.controlnet_down_blocks = nn.ModuleList([nn.Conv2d(channels, channels, 1) for _ in range(3)])
        self.mid_block = nn.Conv2d(channels, channels, 3, padding=1)
        self.controlnet_mid_block = nn.Conv2d(channels, channels, 1)

    def forward(self, sample, timestep, controlnet_cond, conditioning_scale=1.0, guess_mode=True):
        emb = self.time_embedding(timestep[:, None].float())
        sample = self.conv_in(sample)
        controlnet_cond = self.controlnet_cond_embedding(controlnet_cond)
        sample += controlnet_cond

        down_block_res_samples = (sample,)
        for downsample_block in self.down_blocks:
            sample, res_samples = downsample_block(sample, emb)
            down_block_res_samples += res_samples

        sample = self.mid_block(sample)

        controlnet_down_block_res_samples = ()
        for down_block_res_sample, controlnet_block in zip(down_block_res_samples, self.controlnet_down_blocks):
            down_block_res_sample = controlnet_block(down_block_res_sample)
            controlnet_down_block_res_samples += (down_block_res_sample,)
        down_block_res_samples = controlnet_down_block_res_samples

        mid_block_res_sample = self.controlnet_mid_block(sample)

        if guess_mode:
            scales = torch.logspace(-1, 0, len(down_block_res_samples) + 1)  # 0.1 to 1.0
            scales *= conditioning_scale
            down_block_res_samples = [sample * scale for sample, scale in zip(down_block_res_samples, scales)]
            mid_block_res_sample *= scales[-1]  # last one
        else:
            down_block_res_samples = [sample * conditioning_scale for sample in down_block_res_samples]
            mid_block_res_sample *= conditioning_scale
        return down_block_res_samples, mid_block_res_sample


def main():
    controlnet = ControlNetModel()
    latents = torch.randn(2, 4, 8, 8)
    timestep = torch.tensor([10, 500])
    cond_image = torch.rand(2, 3, 8, 8)
    down_res, mid_res = controlnet(latents, timestep, cond_image, conditioning_scale=0.8, guess_mode=True)
    # stand-in for the frozen UNet consuming the residuals
    loss = sum(r.pow(2).mean() for r in down_res) + mid_res.pow(2).mean()
    loss.backward()
    return loss, controlnet.conv_in.weight.grad, controlnet.controlnet_cond_embedding.conv_in.weight.grad


loss, grad_conv_in, grad_cond = main()
