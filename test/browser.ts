/**
 * The one way the tests and scripts get a browser: CHROMIUM_PATH when set (any Chromium or Chrome), else the
 * Chromium that the npm package @sparticuz/chromium ships inside itself, so `npm ci` alone brings one (no system
 * package, no browser download). playwright-core drives either.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type LaunchOptions } from 'playwright-core';

const PACKAGE = '@sparticuz/chromium';

/**
 * This user's own folder in the temp folder, made if missing. The browser is run from it, so no one else may be able
 * to write there: a fixed name shared by all users could be made first by another local user and filled with their
 * own binary. The name holds the uid, and the folder is used only if it is a real folder of this user's that neither
 * group nor others can write to (uids and modes are POSIX; elsewhere the temp folder is the user's own already).
 */
function privateFolder(): string {
    const uid = process.getuid?.();
    const folder = path.join(tmpdir(), `mcp-gateway-${uid ?? 'user'}`);
    try {
        mkdirSync(folder, { mode: 0o700 });
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const stat = lstatSync(folder);
    if (!stat.isDirectory() || (uid !== undefined && (stat.uid !== uid || (stat.mode & 0o022) !== 0))) {
        throw new Error(`${folder} is not a folder of this user's that only this user can write to: remove it, or set CHROMIUM_PATH`);
    }
    return folder;
}

/**
 * The packaged Chromium, unpacked once per user and version into privateFolder(). The package itself unpacks to
 * fixed names in TMPDIR and checks only that the binary exists, so two runs at once could launch a half-written
 * binary: it unpacks into a private folder here (a child process with its own TMPDIR), which is then renamed into
 * place in one step; whoever renames second throws its copy away.
 */
function unpackedChromium(): { executable: string; fontsConfig: string } {
    const entry = fileURLToPath(import.meta.resolve(PACKAGE));
    const root = path.resolve(path.dirname(entry), '..');
    const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
    const home = path.join(privateFolder(), `chromium-${version}`);
    const found = { executable: path.join(home, 'chromium'), fontsConfig: path.join(home, 'fonts.conf') };
    if (existsSync(found.fontsConfig)) return found;

    const staging = mkdtempSync(`${home}.partial-`);
    try {
        const unpack = `const { default: chromium } = await import(${JSON.stringify(entry)}); await chromium.executablePath();`;
        execFileSync(process.execPath, ['--input-type=module', '-e', unpack], { env: { ...process.env, TMPDIR: staging }, stdio: ['ignore', 'ignore', 'inherit'] });
        // The package's own fonts.conf names /tmp/fonts; this one names the fonts it shipped wherever they landed, and
        // the system's fonts after them when there are any (the package's Open Sans alone is enough to read the page).
        writeFileSync(
            path.join(staging, 'fonts.conf'),
            `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n` +
                `  <dir>${path.join(home, 'fonts')}</dir>\n  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>\n` +
                `  <cachedir>${path.join(home, 'fonts-cache')}</cachedir>\n</fontconfig>\n`
        );
        renameSync(staging, home);
    } catch (error) {
        rmSync(staging, { recursive: true, force: true });
        // Renamed by someone else in the meantime: theirs is as good as ours.
        if (!existsSync(found.fontsConfig)) throw error;
    }
    return found;
}

/** What to launch: CHROMIUM_PATH, or the packaged Chromium with its fonts. */
function launchOptions(): LaunchOptions {
    const override = process.env.CHROMIUM_PATH;
    if (override !== undefined && override !== '') {
        if (!existsSync(override)) throw new Error(`CHROMIUM_PATH=${override}: no such file. Unset it to use the Chromium of ${PACKAGE}.`);
        return { executablePath: override };
    }
    const { executable, fontsConfig } = unpackedChromium();
    return { executablePath: executable, env: { ...process.env, FONTCONFIG_FILE: fontsConfig } };
}

/** A headless Chromium; close it when done. */
export async function launchBrowser(): Promise<Browser> {
    return chromium.launch({ ...launchOptions(), headless: true });
}
