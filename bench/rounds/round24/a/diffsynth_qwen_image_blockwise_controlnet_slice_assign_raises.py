# label: hazard raises
# why: model_fn_qwen_image writes the ControlNet residual back into image[:, :image_seq_len] in place, but the same slice (a view of image) was just fed to BlockWiseControlBlock, whose RMSNorm saved it for backward, so backward finds image at a newer version.
# source: https://github.com/modelscope/DiffSynth-Studio/commit/8dae8d7bc82864ae1580b52a5dd2f7f99e9c6a92 (PR #844)
import torch
import torch.nn as nn

torch.manual_seed(0)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        variance = hidden_states.to(torch.float32).square().mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.eps)
        hidden_states = hidden_states.to(input_dtype) * self.weight
        return hidden_states


class BlockWiseControlBlock(torch.nn.Module):
    # [linear, gelu, linear]
    def __init__(self, dim: int = 16):
        super().__init__()
        self.x_rms = RMSNorm(dim, eps=1e-6)
        self.y_rms = RMSNorm(dim, eps=1e-6)
        self.input_proj = nn.Linear(dim, dim)
        self.act = nn.GELU()
        self.output_proj = nn.Linear(dim, dim)

    def forward(self, x, y):
        x, y = self.x_rms(x), self.y_rms(y)
        x = self.input_proj(x + y)
        x = self.act(x)
        x = self.output_proj(x)
        return x


class QwenImageBlockWiseControlNet(torch.nn.Module):
    def __init__(self, num_layers=2, in_dim=8, dim=16):
        super().__init__()
        self.img_in = nn.Linear(in_dim, dim)
        self.controlnet_blocks = nn.ModuleList([BlockWiseControlBlock(dim) for _ in range(num_layers)])

    def process_controlnet_conditioning(self, controlnet_conditioning):
        return self.img_in(controlnet_conditioning)

    def blockwise_forward(self, img, controlnet_conditioning, block_id):
        return self.controlnet_blocks[block_id](img, controlnet_conditioning)


class QwenImageTransformerBlock(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.img_norm = nn.LayerNorm(dim)
        self.img_mlp = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))
        self.txt_mlp = nn.Linear(dim, dim)

    def forward(self, image, text, temb):
        image = image + self.img_mlp(self.img_norm(image) + temb)
        text = text + self.txt_mlp(text)
        return text, image


def gradient_checkpoint_forward(block, use_gradient_checkpointing, **kwargs):
    return block(**kwargs)


def model_fn_qwen_image(dit_blocks, norm_out, proj_out, blockwise_controlnet, image, text, conditioning,
                        image_seq_len, blockwise_controlnet_conditioning=None):
    for block_id, block in enumerate(dit_blocks):
        text, image = gradient_checkpoint_forward(block, False, image=image, text=text, temb=conditioning)
        if blockwise_controlnet_conditioning is not None:
            controlnet_output = blockwise_controlnet.blockwise_forward(
                image[:, :image_seq_len], blockwise_controlnet_conditioning, block_id,
            )
            image[:, :image_seq_len] = image[:, :image_seq_len] + controlnet_output  # <-- IPL001
    image = norm_out(image)
    image = proj_out(image)
    return image[:, :image_seq_len]


def main():
    dim, image_seq_len = 16, 6
    dit_blocks = nn.ModuleList([QwenImageTransformerBlock(dim) for _ in range(2)])
    norm_out, proj_out = nn.LayerNorm(dim), nn.Linear(dim, 8)
    for p in list(dit_blocks.parameters()) + list(norm_out.parameters()) + list(proj_out.parameters()):
        p.requires_grad_(False)
    controlnet = QwenImageBlockWiseControlNet(num_layers=2, in_dim=8, dim=dim)

    image = torch.randn(2, image_seq_len + 2, dim)
    text = torch.randn(2, 3, dim)
    conditioning = torch.randn(2, 1, dim)
    control_latents = torch.randn(2, image_seq_len, 8)
    cond = controlnet.process_controlnet_conditioning(control_latents)

    noise_pred = model_fn_qwen_image(dit_blocks, norm_out, proj_out, controlnet, image, text, conditioning,
                                     image_seq_len, blockwise_controlnet_conditioning=cond)
    loss = noise_pred.pow(2).mean()
    loss.backward()
    return noise_pred.detach(), controlnet.controlnet_blocks[0].input_proj.weight.grad, controlnet.img_in.weight.grad


noise_pred, block0_grad, img_in_grad = main()
