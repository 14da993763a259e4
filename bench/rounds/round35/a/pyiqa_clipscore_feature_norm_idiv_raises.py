# label: hazard raises
# why: pyiqa's CLIPScore normalises the CLIP embeddings with `img_features /= img_features.norm(dim=-1, keepdim=True)`; the norm's backward saved img_features itself, so using CLIPScore as a loss to optimise an image raises at backward (the fix divides out of place; the same in-place division of the frozen text features builds no graph and is harmless).
# source: https://github.com/chaofengc/IQA-PyTorch/commit/a3235032a76412bfba4588f9d9c619ea59675a65
import torch
import torch.nn as nn
import torch.nn.functional as F

OPENAI_CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
OPENAI_CLIP_STD = (0.26862954, 0.26130258, 0.27577711)


def tokenize(texts, context_length=16, vocab_size=64):
    """Stand-in for clip.tokenize: character codes, padded to context_length."""
    result = torch.zeros(len(texts), context_length, dtype=torch.long)
    for i, text in enumerate(texts):
        tokens = [ord(c) % vocab_size for c in text][:context_length]
        result[i, :len(tokens)] = torch.tensor(tokens)
    return result


class VisualEncoder(nn.Module):
    def __init__(self, input_resolution=32, width=16, output_dim=24):
        super().__init__()
        self.input_resolution = input_resolution
        self.conv1 = nn.Conv2d(3, width, kernel_size=8, stride=8, bias=False)
        self.ln_post = nn.LayerNorm(width)
        self.proj = nn.Parameter(torch.randn(width, output_dim) * width ** -0.5)

    def forward(self, x):
        x = self.conv1(x).flatten(2).mean(-1)
        return self.ln_post(x) @ self.proj


class TinyCLIP(nn.Module):
    def __init__(self, vocab_size=64, width=16, embed_dim=24):
        super().__init__()
        self.visual = VisualEncoder(output_dim=embed_dim)
        self.token_embedding = nn.Embedding(vocab_size, width)
        self.ln_final = nn.LayerNorm(width)
        self.text_projection = nn.Parameter(torch.randn(width, embed_dim) * width ** -0.5)

    def encode_image(self, image):
        return self.visual(image)

    def encode_text(self, text):
        x = self.token_embedding(text).mean(1)
        return self.ln_final(x) @ self.text_projection


class CLIPScore(nn.Module):
    def __init__(self, backbone='ViT-B/32') -> None:
        super().__init__()

        self.clip_model = TinyCLIP()
        self.prefix = 'A photo depicts'
        self.w = 2.5

    def preprocess(self, x):
        # Bicubic interpolation
        x = F.interpolate(x, size=self.clip_model.visual.input_resolution, mode='bicubic', align_corners=False)
        # Center crop
        res = self.clip_model.visual.input_resolution
        top, left = (x.shape[-2] - res) // 2, (x.shape[-1] - res) // 2
        x = x[..., top:top + res, left:left + res]
        mean = torch.tensor(OPENAI_CLIP_MEAN).view(1, 3, 1, 1)
        std = torch.tensor(OPENAI_CLIP_STD).view(1, 3, 1, 1)
        return (x - mean) / std

    def forward(self, img, caption_list=None):
        assert caption_list is not None, f'caption_list is None'
        text = tokenize([self.prefix + ' ' + caption for caption in caption_list]).to(img.device)

        img_features = self.clip_model.encode_image(self.preprocess(img))
        text_features = self.clip_model.encode_text(text)
        img_features /= img_features.norm(dim=-1, keepdim=True)  # <-- IPL001
        text_features /= text_features.norm(dim=-1, keepdim=True)
        score = self.w * torch.relu((img_features * text_features).sum(dim=-1))
        return score


def main():
    torch.manual_seed(0)
    metric = CLIPScore()
    for p in metric.parameters():
        p.requires_grad_(False)
    img = torch.rand(2, 3, 48, 48).requires_grad_()
    captions = ['a red apple on a table', 'a dog running on grass']
    score = metric(img, caption_list=captions)
    loss = -score.mean()  # CLIPScore as a loss (as_loss=True)
    loss.backward()
    return score, img


score, img = main()
print(score)
