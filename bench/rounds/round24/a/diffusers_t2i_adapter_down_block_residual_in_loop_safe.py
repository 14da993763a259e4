# label: safe
# why: the merged T2I-Adapter version adds the adapter residual out of place inside the loop, before the output is appended, so the skip connection and the downsampler both see the residual exactly once.
# source: https://github.com/huggingface/diffusers/pull/3932 (merged as commit a0597f33ac, src/diffusers/models/unet_2d_blocks.py CrossAttnDownBlock2D.forward)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ResnetBlock2D(nn.Module):
    def __init__(self, channels, temb_channels):
        super().__init__()
        self.norm1 = nn.GroupNorm(2, channels)
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.time_emb_proj = nn.Linear(temb_channels, channels)
        self.norm2 = nn.GroupNorm(2, channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, input_tensor, temb):
        hidden_states = self.conv1(F.silu(self.norm1(input_tensor)))
        hidden_states = hidden_states + self.time_emb_proj(F.silu(temb))[:, :, None, None]
        hidden_states = self.conv2(F.silu(self.norm2(hidden_states)))
        return input_tensor + hidden_states


class Transformer2DModel(nn.Module):
    def __init__(self, channels, cross_attention_dim):
        super().__init__()
        self.norm = nn.GroupNorm(2, channels)
        self.proj_in = nn.Conv2d(channels, channels, 1)
        self.to_k = nn.Linear(cross_attention_dim, channels)
        self.proj_out = nn.Conv2d(channels, channels, 1)

    def forward(self, hidden_states, encoder_hidden_states=None, return_dict=False):
        residual = hidden_states
        h = self.proj_in(self.norm(hidden_states))
        ctx = self.to_k(encoder_hidden_states).mean(dim=1)[:, :, None, None]
        h = h * torch.sigmoid(ctx)
        output = self.proj_out(h) + residual
        return (output,)


class CrossAttnDownBlock2D(nn.Module):
    def __init__(self, channels, temb_channels, cross_attention_dim, num_layers=2):
        super().__init__()
        self.resnets = nn.ModuleList([ResnetBlock2D(channels, temb_channels) for _ in range(num_layers)])
        self.attentions = nn.ModuleList([Transformer2DModel(channels, cross_attention_dim) for _ in range(num_layers)])
        self.downsamplers = nn.ModuleList([nn.Conv2d(channels, channels, 3, stride=2, padding=1)])

    def forward(self, hidden_states, temb=None, encoder_hidden_states=None, additional_residuals=None):
        output_states = ()
        blocks = list(zip(self.resnets, self.attentions))
        for i, (resnet, attn) in enumerate(blocks):
            hidden_states = resnet(hidden_states, temb)
            hidden_states = attn(hidden_states, encoder_hidden_states=encoder_hidden_states, return_dict=False)[0]

            # apply additional residuals to the output of the last pair of resnet and attention blocks
            if i == len(blocks) - 1 and additional_residuals is not None:
                hidden_states = hidden_states + additional_residuals

            output_states = output_states + (hidden_states,)

        if self.downsamplers is not None:
            for downsampler in self.downsamplers:
                hidden_states = downsampler(hidden_states)
            output_states = output_states + (hidden_states,)
        return hidden_states, output_states


def main():
    block = CrossAttnDownBlock2D(channels=8, temb_channels=16, cross_attention_dim=12)
    sample = torch.randn(2, 8, 8, 8)
    temb = torch.randn(2, 16)
    encoder_hidden_states = torch.randn(2, 5, 12)
    adapter_state = torch.randn(2, 8, 8, 8, requires_grad=True)

    sample, res_samples = block(sample, temb, encoder_hidden_states, additional_residuals=adapter_state)
    # the up path consumes the skip connections and the downsampled sample
    skip = res_samples[-2]
    loss = skip.pow(2).mean() + sample.pow(2).mean()
    loss.backward()
    return loss, skip, adapter_state.grad


loss, skip, grad = main()
